/**
 * The partitions harness's part on host `p` (partitions-harness.ts starts it there with
 * `ip netns exec`): one batch, its report printed as one JSON line on stdout, progress on stderr.
 *
 * Usage: partitions-main.ts <tag> <options as JSON>
 */
import { partitionsOnHost, type PartitionOptions } from "./partitions-harness.js";

const [tag, json] = process.argv.slice(2);
if (!tag || !json) {
  console.error("usage: partitions-main.ts <tag> <options as JSON>");
  process.exit(2);
}
const report = await partitionsOnHost(tag, JSON.parse(json) as PartitionOptions);
console.log(JSON.stringify(report));
// The queues' and pools' sockets are closed; anything else left (a timer of a dead peer's client) must not keep the report waiting.
process.exit(0);
