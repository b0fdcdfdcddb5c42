/**
 * claude-code (pinned in .ci/agents), configured as docs/agents/claude-code.md says, through forge-ts proxy
 * and directly against the scripted model, in a network namespace with only loopback.
 */
import { agentSuite } from "./support/agent-suite.js";

agentSuite("claude-code");
