/** The browser guard's rules, as pure functions (the servers' own tests probe them over sockets). */
import { describe, expect, it } from "vitest";
import { browserRefusal, isLoopbackName, normalOrigin } from "../../src/server/browser-guard.js";

describe("browserRefusal", () => {
  const loopback = { loopbackBind: true };
  it.each([
    ["a loopback Host, no Origin", { host: "127.0.0.1:8081", origin: undefined }, loopback, false],
    ["localhost and [::1]", { host: "[::1]:8081", origin: "http://localhost:3000" }, loopback, false],
    ["a rebinding Host", { host: "evil.example:8081", origin: undefined }, loopback, true],
    ["a foreign Origin", { host: "127.0.0.1:8081", origin: "http://evil.example" }, loopback, true],
    ["the null Origin (sandboxed frame, file://)", { host: "127.0.0.1:8081", origin: "null" }, loopback, true],
    ["a named CORS origin", { host: "127.0.0.1:8081", origin: "https://app.example.com" }, { loopbackBind: true, corsOrigins: ["https://app.example.com"] }, false],
    ["beyond loopback: any Host", { host: "192.168.1.5:8081", origin: undefined }, { loopbackBind: false }, false],
    ["beyond loopback: the server's own origin", { host: "192.168.1.5:8081", origin: "http://192.168.1.5:8081" }, { loopbackBind: false }, false],
    ["beyond loopback: a loopback origin is foreign", { host: "192.168.1.5:8081", origin: "http://localhost:3000" }, { loopbackBind: false }, true],
    ["own page only: another loopback port", { host: "127.0.0.1:5173", origin: "http://127.0.0.1:3000" }, { loopbackBind: true, loopbackOrigins: false }, true],
  ] as const)("%s", (_name, request, policy, refused) => {
    expect(browserRefusal(request, policy) !== undefined).toBe(refused);
  });

  it("says what to do", () => {
    expect(browserRefusal({ host: "127.0.0.1", origin: "http://evil.example" }, loopback)?.message).toContain("--cors-origin http://evil.example");
    expect(browserRefusal({ host: "evil.example", origin: undefined }, loopback)?.message).toContain("DNS-rebinding");
  });
});

describe("names and origins", () => {
  it.each(["localhost", "LOCALHOST:80", "app.localhost", "127.0.0.1", "127.8.9.1:9", "[::1]:1", "::1", "::ffff:127.0.0.1"])("%s is loopback", (h) => expect(isLoopbackName(h)).toBe(true));
  it.each(["evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "0.0.0.0", "", undefined])("%s is not", (h) => expect(isLoopbackName(h)).toBe(false));
  it("an origin is scheme://host[:port] with nothing after", () => {
    expect(normalOrigin("https://App.example.com/")).toBe("https://app.example.com");
    expect(normalOrigin("http://localhost:3000")).toBe("http://localhost:3000");
    for (const bad of ["https://app.example.com/path", "ftp://x", "app.example.com", "http://u:p@x", "http://x/?q=1"]) expect(normalOrigin(bad)).toBeUndefined();
  });
});
