/**
 * How each pinned coding agent (.ci/agents) is run non-interactively against a base URL — the
 * invocations test/fixtures/agents/*.json were captured with (under `unshare -n`, loopback
 * only, a fresh HOME per run). Telemetry, update checks and auto-update are off in every one.
 * Claude Code and Qwen Code need Node >= 22 first on PATH (.ci/node24); all run on it.
 */

export type AgentName = "claude-code" | "codex" | "opencode" | "qwen-code" | "pi";

export interface AgentTarget {
  /** The server's root, e.g. http://127.0.0.1:8081 (no /v1: each agent adds what it needs). */
  baseUrl: string;
  /** The model name the agent asks for. */
  model: string;
  /** Any non-empty value; the agents refuse to start without a key. */
  apiKey: string;
}

export interface AgentInvocation {
  agent: AgentName;
  version: string;
  /** The API it speaks. */
  api: "anthropic-messages" | "openai-chat" | "openai-responses";
  /**
   * Executable relative to the repository root (run directly: claude and opencode are native
   * binaries, the others `#!/usr/bin/env node` scripts), and its arguments.
   */
  command(prompt: string, target: AgentTarget): { file: string; args: string[] };
  env(target: AgentTarget): Record<string, string>;
  /** Files to write before the run: `home/...` under the fresh HOME, `cwd/...` in the working directory. */
  files(target: AgentTarget): Record<string, string>;
}

const bin = (path: string) => `.ci/agents/node_modules/${path}`;
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const INVOCATIONS: Readonly<Record<AgentName, AgentInvocation>> = {
  "claude-code": {
    agent: "claude-code",
    version: "2.1.332",
    api: "anthropic-messages",
    // --dangerously-skip-permissions is refused as root unless IS_SANDBOX=1.
    command: (prompt) => ({ file: bin(".bin/claude"), args: ["-p", prompt, "--dangerously-skip-permissions"] }),
    env: (t) => ({
      ANTHROPIC_BASE_URL: t.baseUrl,
      ANTHROPIC_API_KEY: t.apiKey,
      // A non-Claude name: the shape that sends a system-role message inside `messages`.
      ANTHROPIC_MODEL: t.model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      IS_SANDBOX: "1",
    }),
    files: () => ({}),
  },
  codex: {
    agent: "codex",
    version: "0.171.0",
    api: "openai-responses",
    command: (prompt) => ({ file: bin(".bin/codex"), args: ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt] }),
    env: (t) => ({ FORGE_API_KEY: t.apiKey }),
    // CODEX_HOME defaults to ~/.codex. wire_api = "chat" is refused by 0.171's config loader.
    files: (t) => ({
      "home/.codex/config.toml": [
        `model = ${JSON.stringify(t.model)}`,
        `model_provider = "forge"`,
        `check_for_update_on_startup = false`,
        ``,
        `[model_providers.forge]`,
        `name = "forge-ts proxy"`,
        `base_url = ${JSON.stringify(`${t.baseUrl}/v1`)}`,
        `wire_api = "responses"`,
        `env_key = "FORGE_API_KEY"`,
        `request_max_retries = 0`,
        `stream_max_retries = 0`,
        ``,
        `[analytics]`,
        `enabled = false`,
        ``,
      ].join("\n"),
    }),
  },
  opencode: {
    agent: "opencode",
    version: "1.18.33",
    api: "openai-chat",
    // Its first request is a title request without tools; the agent's turn follows.
    command: (prompt) => ({ file: bin(".bin/opencode"), args: ["run", prompt] }),
    env: () => ({ OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_SHARE: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1" }),
    files: (t) => ({
      "cwd/opencode.json": json({
        $schema: "https://opencode.ai/config.json",
        provider: {
          forge: {
            npm: "@ai-sdk/openai-compatible",
            name: "forge-ts proxy",
            options: { baseURL: `${t.baseUrl}/v1`, apiKey: t.apiKey },
            models: { [t.model]: { name: t.model, tool_call: true } },
          },
        },
        model: `forge/${t.model}`,
        autoupdate: false,
        share: "disabled",
      }),
    }),
  },
  "qwen-code": {
    agent: "qwen-code",
    version: "0.24.4",
    api: "openai-chat",
    command: (prompt) => ({ file: bin(".bin/qwen"), args: ["-p", prompt, "--approval-mode", "yolo"] }),
    env: (t) => ({
      OPENAI_BASE_URL: `${t.baseUrl}/v1`,
      OPENAI_API_KEY: t.apiKey,
      OPENAI_MODEL: t.model,
      QWEN_USAGE_STATISTICS_ENABLED: "false",
      QWEN_TELEMETRY_ENABLED: "false",
      QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    }),
    files: () => ({
      "home/.qwen/settings.json": json({
        general: { enableAutoUpdate: false },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        security: { auth: { selectedType: "openai" } },
      }),
    }),
  },
  pi: {
    agent: "pi",
    version: "0.73.1",
    api: "openai-chat",
    command: (prompt, t) => ({ file: bin(".bin/pi"), args: ["--provider", "forge", "--model", t.model, "-p", prompt] }),
    env: () => ({ PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" }),
    files: (t) => ({
      "home/.pi/agent/models.json": json({ providers: { forge: { baseUrl: `${t.baseUrl}/v1`, api: "openai-completions", apiKey: t.apiKey, models: [{ id: t.model }] } } }),
      "home/.pi/agent/settings.json": json({ enableInstallTelemetry: false }),
    }),
  },
};
