/**
 * The small logging surface the backend layer and the model sampling table use. Auto-detected
 * settings are logged with what was chosen (seed principle "explicit over implicit"); pass your
 * own logger to route them. It lives in core because it imports nothing and both src/models and
 * src/server need it.
 */
export interface ForgeLogger {
  info(message: string): void;
  warn(message: string): void;
}

/**
 * Writes to stderr with a `[forge-ts]` prefix, leaving stdout to the application.
 *
 * @example
 * const server = new ServerManager({ backend: "ollama", logger: consoleLogger });
 */
export const consoleLogger: ForgeLogger = {
  info: (message) => console.error(`[forge-ts] INFO ${message}`),
  warn: (message) => console.error(`[forge-ts] WARN ${message}`),
};
