/**
 * opencode (pinned in .ci/agents), configured as docs/agents/opencode.md says, through forge-ts proxy
 * and directly against the scripted model, in a network namespace with only loopback.
 */
import { agentSuite } from "./support/agent-suite.js";

agentSuite("opencode");
