// Tool-name patterns in the MCP config: `*` matches any run of characters,
// `?` one character; anything else matches itself. Matched against the
// server's own tool name (not the prefixed one).
export function globMatches(pattern: string, name: string): boolean {
  const re = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(name);
}

export const anyMatches = (patterns: readonly string[], name: string): boolean => patterns.some((p) => globMatches(p, name));
