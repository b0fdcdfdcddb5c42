/** A statechart value as one dotted name: "inferring", "executingTools.running". */
export function stateName(value: unknown): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    const [key, inner] = Object.entries(value)[0] ?? ["", undefined];
    const sub = stateName(inner);
    return sub ? `${key}.${sub}` : key;
  }
  return "";
}
