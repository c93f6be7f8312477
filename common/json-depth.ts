// How deep a JSON value nests, for the bounds every decoder of outside JSON
// checks (a tool call's arguments, an outputSchema and a structured answer, a
// runContext). Workflow-safe: the workflow checks arguments and answers itself.

/**
 * How deep a JSON value nests (a scalar: 0, `{}`: 1), counted without
 * recursion, and only up to `stopAbove` + 1: a value nested thousands deep
 * costs no stack and no more work than its first levels.
 */
export function nestingDepth(v: unknown, stopAbove: number): number {
  let deepest = 0;
  const todo: { v: unknown; depth: number }[] = [{ v, depth: 0 }];
  while (todo.length > 0) {
    const { v: x, depth } = todo.pop() as { v: unknown; depth: number };
    if (typeof x !== 'object' || x === null) continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > stopAbove) return deepest;
    for (const child of Array.isArray(x) ? x : Object.values(x)) todo.push({ v: child, depth: here });
  }
  return deepest;
}
