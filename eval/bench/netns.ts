/**
 * Test hosts on one machine: each host a Linux network namespace with one interface (`eth0`,
 * 10.77.0.<n>/24), every host's link a veth pair whose other end is a port of a bridge in a
 * namespace of its own (the switch). Nothing is added to the machine's own namespace, so
 * nothing here can reach, or be reached from, any address outside these hosts.
 *
 * Faults act on one host's link, in both directions (the host's end and the switch's port):
 * - `cut`: every packet dropped (a pfifo queue of length 0), so connections hang rather than
 *   fail: the peer looks alive and never answers, what a partition looks like to TCP;
 * - `down`: the link down, so sends fail at once (no route);
 * - `lossy`: a share of packets dropped at random (an htb class fed by a classic-BPF filter
 *   that reads the kernel's random number, its leaf a queue of length 0);
 * - `slow`: the link shaped to a rate (htb), so packets queue behind each other.
 * This kernel has no netem (`tc qdisc add ... netem` is refused), so delay cannot be added per
 * packet; a slow link is how delay reaches the hosts here. `heal` undoes any of them.
 *
 * Needs root (CAP_NET_ADMIN) and iproute2's `ip` and `tc` (.ci/run installs iproute2). Namespaces
 * are torn down by `destroy()`, by an exit hook, and by a watchdog shell that outlives even a
 * SIGKILL of this process.
 */
import { execFileSync, spawn } from "node:child_process";

export type LinkFault = "cut" | "down" | "lossy" | "slow";

export interface Host {
  name: string;
  /** The namespace's name, for `ip netns exec`. */
  ns: string;
  ip: string;
}

export interface Topology {
  hosts: ReadonlyMap<string, Host>;
  host(name: string): Host;
  /** argv prefix running a command on `host`: `ip netns exec <ns>` (the pid stays the command's: ip execs it). */
  on(host: string, file: string, args: readonly string[]): [string, string[]];
  fault(host: string, fault: LinkFault, options?: { lossPercent?: number; rateKbit?: number }): void;
  heal(host: string): void;
  destroy(): void;
}

const SUBNET = "10.77.0";

/** Runs `ip`/`tc`; a failure throws with the command and its stderr. */
function sh(file: string, args: readonly string[]): string {
  try {
    return execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 10_000 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`${file} ${args.join(" ")} failed: ${(stderr || (error as Error).message).trim()}`);
  }
}

/** Why this machine cannot build the hosts, or undefined when it can. */
export function topologyUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "test hosts need root (network namespaces); run as root, as CI does";
  for (const tool of ["ip", "tc"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    } catch {
      return `test hosts need iproute2's ${tool} (apt-get install iproute2; .ci/run installs it)`;
    }
  }
  return undefined;
}

const ipIn = (ns: string, ...args: string[]) => sh("ip", ["-n", ns, ...args]);
const tcIn = (ns: string, ...args: string[]) => sh("ip", ["netns", "exec", ns, "tc", ...args]);

/** The namespaces of the hosts `names` under `tag`: the switch's first. */
function namesOf(names: readonly string[], tag: string): { sw: string; hosts: Map<string, Host> } {
  return { sw: `${tag}-sw`, hosts: new Map(names.map((name, i) => [name, { name, ns: `${tag}-${name}`, ip: `${SUBNET}.${i + 1}` }])) };
}

/**
 * The hosts, named as given, on one switch. `tag` makes the namespace names unique on the
 * machine (default: this process's pid), so two harnesses never share a host.
 */
export function createTopology(names: readonly string[], tag = `fg${process.pid}`): Topology {
  const why = topologyUnavailable();
  if (why) throw new Error(why);
  const { sw, hosts } = namesOf(names, tag);
  const all = [sw, ...[...hosts.values()].map((h) => h.ns)];
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    process.off("exit", destroy);
    watchdog.kill();
    for (const ns of all) {
      try {
        sh("ip", ["netns", "del", ns]);
      } catch {
        // never made, or gone already
      }
    }
  };
  // Torn down when this process goes, however it goes.
  const watchdog = spawn("sh", ["-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; for ns in ${all.join(" ")}; do ip netns del $ns 2>/dev/null; done`], { detached: true, stdio: "ignore" });
  watchdog.unref();
  process.once("exit", destroy);
  try {
    for (const ns of all) sh("ip", ["netns", "add", ns]);
    ipIn(sw, "link", "add", "br0", "type", "bridge");
    ipIn(sw, "link", "set", "br0", "up");
    for (const h of hosts.values()) {
      // Both ends made in their namespaces: no transient interface in the machine's own.
      ipIn(sw, "link", "add", `p-${h.name}`, "type", "veth", "peer", "name", "eth0", "netns", h.ns);
      ipIn(sw, "link", "set", `p-${h.name}`, "master", "br0", "up");
      ipIn(h.ns, "addr", "add", `${h.ip}/24`, "dev", "eth0");
      ipIn(h.ns, "link", "set", "eth0", "up");
      ipIn(h.ns, "link", "set", "lo", "up");
    }
  } catch (error) {
    destroy();
    throw error;
  }
  return { ...attachTopology(names, tag), destroy };
}

/**
 * The hosts `createTopology(names, tag)` built, from another process (one running on a host:
 * `ip netns exec` works from inside a namespace too). Its `destroy` does nothing: the creator
 * tears them down.
 */
export function attachTopology(names: readonly string[], tag: string): Topology {
  const { sw, hosts } = namesOf(names, tag);
  const host = (name: string) => {
    const h = hosts.get(name);
    if (!h) throw new Error(`no host "${name}" (hosts: ${[...hosts.keys()].join(", ")})`);
    return h;
  };
  /** Both ends of a host's link: [namespace, device]. */
  const ends = (h: Host): [string, string][] => [
    [h.ns, "eth0"],
    [sw, `p-${h.name}`],
  ];
  const heal = (name: string) => {
    const h = host(name);
    ipIn(h.ns, "link", "set", "eth0", "up");
    for (const [ns, dev] of ends(h)) {
      // A veth's own root is noqueue, which cannot be deleted: only ours are.
      if (/qdisc (htb|pfifo) /.test(tcIn(ns, "qdisc", "show", "dev", dev))) tcIn(ns, "qdisc", "del", "dev", dev, "root");
    }
  };
  return {
    hosts,
    host,
    on: (name, file, args) => ["ip", ["netns", "exec", host(name).ns, file, ...args]],
    heal,
    fault(name, fault, options = {}) {
      const h = host(name);
      if (fault === "down") return void ipIn(h.ns, "link", "set", "eth0", "down");
      for (const [ns, dev] of ends(h)) {
        if (fault === "cut") {
          tcIn(ns, "qdisc", "replace", "dev", dev, "root", "pfifo", "limit", "0");
          continue;
        }
        const rate = fault === "slow" ? `${options.rateKbit ?? 64}kbit` : "10gbit";
        tcIn(ns, "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "10", "r2q", "100000");
        tcIn(ns, "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb", "rate", rate, "ceil", rate);
        if (fault !== "lossy") continue;
        const share = options.lossPercent ?? 10;
        if (!(share > 0 && share < 100)) throw new Error(`lossPercent must be between 0 and 100, got ${share}`);
        tcIn(ns, "class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb", "rate", "10gbit");
        tcIn(ns, "qdisc", "add", "dev", dev, "parent", "1:20", "pfifo", "limit", "0");
        // Classic BPF: load the kernel's random u32 (ancillary offset SKF_AD_RANDOM); at or
        // above the threshold, return -1 (the filter's class, 1:20, which drops); else 0 (no
        // match: the default class, which sends).
        const threshold = Math.floor(2 ** 32 * (1 - share / 100));
        tcIn(ns, "filter", "add", "dev", dev, "parent", "1:", "protocol", "all", "prio", "1", "bpf", "bytecode", `4,32 0 0 ${2 ** 32 - 4096 + 56},53 0 1 ${threshold},6 0 0 ${2 ** 32 - 1},6 0 0 0`, "classid", "1:20");
      }
    },
    destroy: () => undefined,
  };
}
