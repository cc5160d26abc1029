import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Where free ports are looked for: from here up to the kernel's ephemeral range. */
const LOWEST_PORT = 10_000;

/**
 * A port on 127.0.0.1 that is free now and that the kernel will not hand out by itself.
 * A port from listen(0) lies in the ephemeral range, where any outgoing connection can take
 * it before the test binds it (CI saw EADDRINUSE that way). Below that range only an explicit
 * bind takes a port, so a random free one stays free unless another test picks the same one.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralRangeStart();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = randomInt(LOWEST_PORT, below);
    if (await portIsFree(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${LOWEST_PORT} and ${below} after 100 tries`);
}

/** Whether `port` on 127.0.0.1 can be bound right now. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The first port of net.ipv4.ip_local_port_range (Linux; 32768 is its default). */
function ephemeralRangeStart(): number {
  const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  if (!Number.isInteger(low) || low <= LOWEST_PORT + 1000) {
    throw new Error(
      `net.ipv4.ip_local_port_range starts at ${low}: tests need it above ${LOWEST_PORT + 1000} (sysctl -w net.ipv4.ip_local_port_range="32768 60999")`,
    );
  }
  return low;
}
