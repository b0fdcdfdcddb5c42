/**
 * The small logging surface the backend layer uses. Auto-detected settings are logged with
 * what was chosen (seed principle "explicit over implicit"); pass your own logger to route them.
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
