// MAC addresses in one spelling: lower-case, colon-separated.
const macPattern = /^([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})$/;

/** `AA-BB-CC-DD-EE-FF`, `aabb.ccdd.eeff`-less forms → `aa:bb:cc:dd:ee:ff`; undefined if not a MAC. */
export function normalizeMac(text: string): string | undefined {
  const match = macPattern.exec(text.trim().toLowerCase());
  if (!match) return undefined;
  const mac = match.slice(1).join(':');
  return mac === '00:00:00:00:00:00' || mac === 'ff:ff:ff:ff:ff:ff' ? undefined : mac;
}

/** A refusal naming what was given, quoted at most 40 characters long: the value is a caller's, of any size. */
export function malformedMacMessage(given: unknown): string {
  const quoted =
    typeof given === 'string' ? JSON.stringify(given.length > 40 ? `${given.slice(0, 40)}…` : given) : `a ${given === null ? 'null' : typeof given}`;
  return `${quoted} is not a unicast MAC address (aa:bb:cc:dd:ee:ff)`;
}
