// api.processes: the control plane hands its listening socket to more API processes (real
// child processes, each with its own database connection and Temporal client). New connections
// spread over them, a write made through one is read through the others, GET /metrics answers
// the sum over all of them from whichever process it reaches, an API process that dies is
// replaced while the others keep answering (later each time one dies soon after it started),
// and closing the control plane stops them all.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SiteView } from '../../core/schemas/sites';
import { API_LOG_FILE } from '../../api/log-file';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';

const API_PROCESSES = 3;
const SITES_ROUTE = /^ironflow_api_request_duration_seconds_count\{method="GET",route="\/v1\/sites\/:siteId",status="200"\} (\d+)$/m;

let t: TestControlPlane;
let site: SiteView;
/** The API processes started with the control plane. */
let original: number[];
beforeAll(async () => {
  t = await startTestControlPlane({ config: await testConfig({ IRONFLOW_API_PROCESSES: String(API_PROCESSES) }) });
  site = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'procs-1', idempotencyKey: 'api-processes-site' });
  original = t.cp.apiProcesses!.pids();
}, 180_000);
afterAll(async () => t?.close());

/** One request on a connection of its own (no keep-alive), so the kernel hands each to whichever process accepts first. */
function onNewConnection(pathAndQuery: string): Promise<{ status: number; body: string }> {
  const url = new URL(t.cp.url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: pathAndQuery, agent: false, headers: { authorization: `Bearer ${t.cp.rootCredential.bearer}` } },
      (answer) => {
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (body += chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    // A connection nobody answers fails the test here rather than hanging it.
    request.setTimeout(10_000, () => request.destroy(new Error(`no answer to GET ${pathAndQuery} within 10 s`)));
    request.end();
  });
}

const readSite = () => onNewConnection(`/v1/sites/${site.id}?tenantId=root`);

/** How many GETs of a site each process answered 200, this process first. */
async function sitesReadByProcess(): Promise<number[]> {
  const byProcess = await t.cp.apiProcesses!.metricsByProcess();
  return byProcess.map((metrics) => {
    const histogram = metrics.find((metric) => metric.name === 'ironflow_api_request_duration_seconds');
    const counts = (histogram?.values ?? []).filter(
      (value) =>
        (value as { metricName?: string }).metricName === 'ironflow_api_request_duration_seconds_count' &&
        value.labels.method === 'GET' &&
        value.labels.route === '/v1/sites/:siteId' &&
        String(value.labels.status) === '200',
    );
    return counts.reduce((sum, value) => sum + value.value, 0);
  });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the API served by several processes (api.processes)', () => {
  it('starts the API processes beside its own, and new connections reach every one of them', async () => {
    const pids = t.cp.apiProcesses!.pids();
    expect(pids).toHaveLength(API_PROCESSES - 1);
    expect(new Set([...pids, process.pid]).size).toBe(API_PROCESSES);
    expect(pids.every(alive)).toBe(true);
    // Each API process accepts one connection at a time (libuv's UV_TCP_SINGLE_ACCEPT, in the
    // environment it was started with); the control plane's own, which the processes it starts
    // later inherit, is as it was.
    for (const pid of pids) expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain('UV_TCP_SINGLE_ACCEPT=1');
    expect(process.env.UV_TCP_SINGLE_ACCEPT).toBeUndefined();

    const before = await sitesReadByProcess();
    const answers = [];
    for (let i = 0; i < 90; i++) answers.push(await readSite());
    // The site was written through one process; every process reads it from the database.
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    expect(answers.every((answer) => (JSON.parse(answer.body) as SiteView).id === site.id)).toBe(true);

    const after = await sitesReadByProcess();
    expect(after).toHaveLength(API_PROCESSES);
    const served = after.map((count, i) => count - (before[i] ?? 0));
    expect(served.reduce((a, b) => a + b, 0)).toBe(90);
    for (const count of served) expect(count).toBeGreaterThan(0);
  });

  it('answers GET /metrics with the sum over every process, from whichever process the scrape reaches', async () => {
    const total = (await sitesReadByProcess()).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(90);
    // Scrapes on new connections reach different processes; each answers the same sum.
    for (let i = 0; i < 12; i++) {
      const scrape = await onNewConnection('/metrics');
      expect(scrape.status).toBe(200);
      expect(Number(SITES_ROUTE.exec(scrape.body)?.[1])).toBe(total);
      // One set of database-read gauges, whichever process set them.
      expect(scrape.body.match(/^# TYPE ironflow_agent_sessions gauge$/gm)).toHaveLength(1);
    }
  });

  it('replaces an API process that dies, and every connection is answered while the new one starts', async () => {
    const [victim, survivor] = t.cp.apiProcesses!.pids() as [number, number];
    process.kill(victim, 'SIGKILL');
    const statuses: number[] = [];
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      statuses.push((await readSite()).status);
      const pids = t.cp.apiProcesses!.pids();
      if (pids.length === API_PROCESSES - 1 && !pids.includes(victim)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    const pids = t.cp.apiProcesses!.pids();
    expect(pids).toHaveLength(API_PROCESSES - 1);
    expect(pids).toContain(survivor);
    expect(pids).not.toContain(victim);
    expect(alive(victim)).toBe(false);

    // The new process serves: every process answers some of the next reads.
    const before = await sitesReadByProcess();
    for (let i = 0; i < 90; i++) expect((await readSite()).status).toBe(200);
    const after = await sitesReadByProcess();
    expect(after).toHaveLength(API_PROCESSES);
    after.forEach((count, i) => expect(count - (before[i] ?? 0)).toBeGreaterThan(0));
  }, 90_000);

  it('waits twice as long before replacing a process that died soon after it started', async () => {
    // The last test's victim was replaced after 1 s; its replacement dies within a minute of serving, so the next one waits 2 s.
    const replacement = t.cp.apiProcesses!.pids().find((pid) => !original.includes(pid)) as number;
    const killedAt = Date.now();
    process.kill(replacement, 'SIGKILL');
    while (t.cp.apiProcesses!.pids().length < API_PROCESSES - 1 || t.cp.apiProcesses!.pids().includes(replacement)) {
      expect(Date.now() - killedAt).toBeLessThan(60_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(2_000);
    const restarts = readFileSync(path.join(t.config.dataDir, API_LOG_FILE), 'utf8')
      .split('\n')
      .filter((line) => line.includes('an API process exited: starting another'))
      .map((line) => JSON.parse(line) as { pid: number; restartInMs: number });
    expect(restarts.map(({ restartInMs }) => restartInMs)).toEqual([1_000, 2_000]);
    expect(restarts[1]?.pid).toBe(replacement);
  }, 90_000);

  it('stops every API process when the control plane closes', async () => {
    const pids = t.cp.apiProcesses!.pids();
    await t.close();
    expect(pids.some(alive)).toBe(false);
    t = undefined as unknown as TestControlPlane;
  });
});
