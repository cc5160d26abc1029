// The emulated Redfish BMCs of the API figure's machines, in a process of their own (so their
// answers cost the API process nothing): N machines, all off, behind one HTTP server on
// loopback. Prints one JSON line { url, machines: [{ id, username, password }] } when ready,
// and runs until killed.
//
//   npx tsx bench/api/bmcs.ts 500
import { randomBytes, randomUUID } from 'node:crypto';
import { RedfishBmcHost } from '../../agent/emulator/redfish-bmc';
import { serveUntilKilled } from '../lib/ready-child';

/** What this process prints once ready. */
export interface Bmcs {
  url: string;
  machines: Array<{ id: string; username: string; password: string }>;
}

async function main(): Promise<{ ready: Bmcs; stop(): Promise<void> }> {
  const count = Number(process.argv[2]);
  if (!Number.isInteger(count) || count < 1 || count > 10_000) throw new Error('usage: bench/api/bmcs.ts N (1 to 10,000 machines)');
  const host = await RedfishBmcHost.start();
  const machines = Array.from({ length: count }, (_, i) => {
    const spec = {
      id: `api-bench-${i}`,
      uuid: randomUUID(),
      macs: [
        `02:00:00:aa:${Math.floor(i / 256)
          .toString(16)
          .padStart(2, '0')}:${(i % 256).toString(16).padStart(2, '0')}`,
      ],
      username: 'bench',
      password: randomBytes(9).toString('base64url'),
      powerState: 'Off' as const,
    };
    host.add(spec);
    return { id: spec.id, username: spec.username, password: spec.password };
  });
  return {
    ready: { url: host.url, machines },
    stop: async () => {
      await host.close();
    },
  };
}

serveUntilKilled(main);
