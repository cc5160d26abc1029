// The installed OS's agent with --metrics-address, as the real `ironflow agent node` process
// an operator's systemd drop-in runs (docs/metrics.md): the Temporal SDK exports its worker's
// metrics there, labelled with the agent's own queue, and counts the steps it ran. The
// machine is adopted with a pool's adopt token (the host this test runs on is its OS, read
// only: the pool sets no host config). An address it cannot listen on stops the agent before
// it joins, naming the flag.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AdoptTokenView } from '../../core/schemas/adopt';
import type { MetalNodeView } from '../../core/schemas/metal';
import { nodeIdOf, spawnAgentProcess, type AgentProcess } from '../helpers/agent-process';
import { startBootSite, until, type BootSite } from '../helpers/boot-site';
import { freePort } from '../helpers/ports';

let site: BootSite;
let dir: string;
const agents: AgentProcess[] = [];

beforeAll(async () => {
  site = await startBootSite('node-agent-metrics');
  dir = mkdtempSync(path.join(inject('runDir'), 'node-agent-metrics-'));
}, 60_000);

afterAll(async () => {
  for (const agent of agents) agent.child.kill('SIGTERM');
  await Promise.all(agents.map((agent) => agent.exited));
  await site?.t.close();
});

/** The value of the first series whose line matches `pattern` (name and labels), or undefined. */
const valueOf = (text: string, pattern: RegExp): number | undefined => {
  const line = text.split('\n').find((l) => pattern.test(l));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('ironflow agent node --metrics-address', () => {
  it("exports the agent's worker metrics on its own queue, with the steps it ran", async () => {
    const api = site.t.root;
    const pool = await api.call<{ id: string }>('POST', '/v1/pools', {
      tenantId: 'root',
      siteId: site.siteId,
      class: 'node-metrics',
      policy: { acceptanceChecks: [{ name: 'cpus', params: { min: 1 } }] },
    });
    const token = await api.call<AdoptTokenView>('POST', '/v1/metal/adopt-tokens', { tenantId: 'root', poolId: pool.id });
    const tokenFile = path.join(dir, 'adopt-token');
    writeFileSync(tokenFile, `${token.token}\n`, { mode: 0o600 });
    const dataDir = path.join(dir, 'data');
    const address = `127.0.0.1:${await freePort()}`;
    const agent = spawnAgentProcess(['node', '--server', site.t.cp.url, '--token-file', tokenFile, '--data-dir', dataDir, '--metrics-address', address]);
    agents.push(agent);

    const running = await agent.waitForLog('node agent running');
    expect(running.metrics).toBe(`http://${address}/metrics`);
    const nodeId = nodeIdOf(dataDir);
    // The pool's acceptance check runs on the agent: adopted once it passed.
    await until(
      `${nodeId} to be adopted`,
      async () => {
        const node = await api.call<MetalNodeView>('GET', `/v1/metal/nodes/${nodeId}?tenantId=root`);
        return node.provisionState === 'adopted' && node.workflowId === null;
      },
      60_000,
    );

    const queue = `task_queue="node.${nodeId}"`;
    const text = await until('the exporter to count the acceptance check', async () => {
      const body = await (await fetch(`http://${address}/metrics`)).text();
      return body.includes('activity_type="acceptance.check"') ? body : undefined;
    });
    const slots = new RegExp(`^temporal_worker_task_slots_available\\{(?=[^}]*${queue})(?=[^}]*worker_type="ActivityWorker")`);
    // The node agent runs at most 4 steps at once (agent/node/main.ts), and none is running now.
    expect(valueOf(text, slots)).toBe(4);
    const executed = new RegExp(`^temporal_activity_execution_latency_count\\{(?=[^}]*activity_type="acceptance\\.check")(?=[^}]*${queue})`);
    expect(valueOf(text, executed)).toBe(1);
  }, 120_000);

  it('stops before joining when it cannot listen on the address, naming the flag', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    const dataDir = path.join(dir, 'refused');
    const agent = spawnAgentProcess([
      'node',
      '--server',
      site.t.cp.url,
      '--token-file',
      path.join(dir, 'no-token'),
      '--data-dir',
      dataDir,
      '--metrics-address',
      `127.0.0.1:${port}`,
    ]);
    agents.push(agent);
    const { code } = await agent.exited;
    taken.close();
    expect(code).not.toBe(0);
    expect(agent.lines.join('\n')).toContain(`the Temporal SDK's metrics exporter cannot listen on 127.0.0.1:${port}`);
    expect(agent.lines.join('\n')).toContain('set --metrics-address to a free host:port');
    // It stopped before the join: the missing token file is not what it names, and its data dir was never made.
    expect(agent.lines.join('\n')).not.toContain('no-token');
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});
