// How deep a parsed JSON value nests, found without recursion: a document too deep to walk
// recursively (zod, structuredClone, our own checks) is refused before anything walks it.

export type JsonPath = Array<string | number>;

/**
 * The path of the first object or array nested deeper than `maxDepth` (the value itself is
 * depth 1 when it is one), or undefined when the value stays within it.
 */
export function pathPastDepth(value: unknown, maxDepth: number): JsonPath | undefined {
  const pending: Array<{ value: unknown; path: JsonPath }> = [{ value, path: [] }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.path.length >= maxDepth) return next.path;
    const entries: Array<[string | number, unknown]> = Array.isArray(next.value) ? next.value.map((item, i) => [i, item]) : Object.entries(next.value);
    // Reversed onto the stack, so the first deep path in document order is the one named.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i] as [string | number, unknown];
      pending.push({ value: inner, path: [...next.path, key] });
    }
  }
  return undefined;
}
