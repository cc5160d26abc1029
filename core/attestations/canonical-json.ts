// Canonical JSON: the one byte string a JSON value signs as, whoever serialises it. Object
// keys sorted by code unit, no whitespace, values as JSON.stringify writes them; undefined
// members are dropped and undefined array items are null, as in JSON. A result that went
// through Temporal's payload converter (and back) canonicalises to the same bytes.
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
