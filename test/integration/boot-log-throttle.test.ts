// A flood of script fetches from MACs without a boot entry (anyone on the provisioning
// network can send them) costs the site agent's log a bounded number of lines per second,
// and every refusal is still counted: one line each up to the limit, then a count.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_LINES_PER_SECOND } from '../../agent/boot/throttled-log';
import type { SiteAgent } from '../../agent/site/main';
import { activeAgent, startBootSite, type BootSite } from '../helpers/boot-site';

let site: BootSite;
let agent: SiteAgent;

beforeAll(async () => {
  site = await startBootSite('boot-log-throttle-site');
  agent = await site.startAgent();
  await activeAgent(agent);
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await site?.t.close();
});

/** From `from`, a loopback address: the flood comes from many sources, each under the boot server's per-source refusal limit. */
function get(url: string, from = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { localAddress: from }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

const REFUSED = 'boot script refused: no boot entry for this MAC';
const mac = (i: number) => `02:00:00:00:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;

describe('the boot server log under a flood of unknown MACs', () => {
  it('writes at most its per-second limit of refusal lines, and counts the rest', async () => {
    const flood = 300;
    const firstSecond = Math.floor(Date.now() / 1000);
    for (let batch = 0; batch < flood; batch += 25) {
      const statuses = await Promise.all(
        Array.from({ length: 25 }, (_, i) => get(`${agent.bootServer?.url}/boot/ipxe?mac=${mac(batch + i)}`, `127.0.4.${batch / 25 + 1}`)),
      );
      expect(new Set(statuses)).toEqual(new Set([404]));
    }
    const lastSecond = Math.floor(Date.now() / 1000);
    const oneByOne = () => agent.log.tail(500).filter((e) => e.message === REFUSED);
    expect(oneByOne().length).toBeLessThanOrEqual(LOG_LINES_PER_SECOND * (lastSecond - firstSecond + 1));

    // The count of a second's unlogged refusals is written with the first refusal after it.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    expect(await get(`${agent.bootServer?.url}/boot/ipxe?mac=${mac(flood)}`)).toBe(404);
    const counted = agent.log
      .tail(500)
      .filter((e) => e.message === `${REFUSED} (more than logged one by one)`)
      .reduce((sum, e) => sum + Number(e.unlogged), 0);
    expect(oneByOne().length + counted).toBe(flood + 1);
  });
});
