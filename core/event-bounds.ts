// Bounds on what one event may hold. Events record requests that anyone may send (a refused
// join, a bad signature), so every field is clipped before it is stored: a long string keeps
// its head and says how much was cut, long lists and objects keep their first entries, deep
// values stop at a depth.

export interface EventBounds {
  maxString: number;
  maxItems: number;
  maxDepth: number;
}

export const EVENT_BOUNDS: EventBounds = { maxString: 1_024, maxItems: 1_000, maxDepth: 16 };

export function clipString(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max)}…[${value.length - max} more characters]`;
}

/** A copy of `value` within the bounds (JSON values only; anything else becomes its string form). */
export function boundValue(value: unknown, bounds: EventBounds = EVENT_BOUNDS, depth = 0): unknown {
  if (typeof value === 'string') return clipString(value, bounds.maxString);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (value === undefined) return undefined;
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== 'object') return clipString(String(value), bounds.maxString);
  if (depth >= bounds.maxDepth) return '[nested too deep]';
  if (Array.isArray(value)) {
    const kept = value.slice(0, bounds.maxItems).map((item) => boundValue(item, bounds, depth + 1));
    return value.length > bounds.maxItems ? [...kept, `[${value.length - bounds.maxItems} more items]`] : kept;
  }
  const entries = Object.entries(value);
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries.slice(0, bounds.maxItems)) out[clipString(key, bounds.maxString)] = boundValue(item, bounds, depth + 1);
  if (entries.length > bounds.maxItems) out['[more keys]'] = entries.length - bounds.maxItems;
  return out;
}
