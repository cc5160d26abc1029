// One fleet run of the fleet figure, in a process of its own: a fresh bench stack (the Temporal
// dev server; with --temporal cluster the cluster profile's: the real Temporal server and the
// API's database on PostgreSQL, and --workers N control-plane worker processes running the
// workflows), the control plane as a child process (bench/fleet/control-plane.ts), a real site
// agent and N emulated machines (Redfish BMCs, PXE firmware, real ramdisk agents, an installed
// OS running the real node agent) in this process, and a signed image on a local HTTPS server.
// All N are enrolled at once and taken to ready, then deployed at once, then released at once;
// each phase ends when every node rests in its state or has failed (or at the phase's deadline).
// Prints one JSON line (CycleResult) on stdout; progress on stderr.
//
//   npx tsx bench/fleet/cycle.ts --machines 10 [--temporal dev|cluster] [--workers N]
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { copyFileSync, createWriteStream, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { Fleet } from '../../agent/emulator/fleet';
import { nodeAgentOs } from '../../agent/emulator/installed-os';
import { AgentLog } from '../../agent/common/log';
import { loadSiteAgentConfig } from '../../agent/site/config';
import { startSiteAgent } from '../../agent/site/main';
import { ApiClient } from '../../cli/api-client';
import type { MetalNodeView } from '../../core/schemas/metal';
import type { MetalStatusView } from '../../core/schemas/metal-status';
import { searchAttributeKeys } from '../../core/search-attributes';
import { sealedDataConverter } from '../../services/sealing';
import { temporalConnectionOptions } from '../../services/temporal/connection-options';
import { startWorkerProcesses } from '../../stack/cluster';
import { writeLocalSiteAgentConfig } from '../../stack/local-site-agent-config';
import { emulatedOsHostProfile, serveLocalOsImage } from '../../stack/local-os-image';
import { freePort } from '../../test/helpers/ports';
import { startBenchStack } from '../lib/bench-stack';
import { callErrors, callsPerMachine, readCallCounts, type CallCounts } from '../lib/call-counts';
import { startClusterBenchStack } from '../lib/cluster-bench-stack';
import type { ControlPlaneMessage } from './control-plane';
import {
  commonChain,
  phaseOf,
  procPssBytes,
  procStatCpuTicks,
  procStatReapedChildrenTicks,
  stepCount,
  tallyStatuses,
  type FleetPhase,
  type FleetTemporal,
  type NodeMiss,
} from './tally';

export interface CycleResult {
  machines: number;
  /** The dev server (the worker in the control-plane process), or the cluster with its worker processes. */
  temporal: FleetTemporal;
  phases: FleetPhase[];
  /** Workflows the run started, by type (provision, nodeLifecycle, …). */
  workflowsByType: Record<string, number>;
  /** Per phase, the chain of provision workflows (by step count) most nodes ran. */
  chains: number[][];
  /** controlPlane: its process and the worker processes; temporal: the Temporal server and, on the cluster, PostgreSQL's processes. */
  cpuMs: { controlPlane: number; temporal: number; site: number };
  peakRssBytes: { controlPlaneAndTemporal: number; site: number };
  /** Requests per machine over the three phases: agents' calls through the gateway by call, API requests by route. */
  callsPerMachine: CallCounts;
  /** The agent gateway's error answers over the three phases, in all, by role, call and gRPC status. */
  callErrors: CallCounts;
}

const { values } = parseArgs({
  options: { machines: { type: 'string', default: '10' }, temporal: { type: 'string', default: 'dev' }, workers: { type: 'string' } },
});
const machines = Number(values.machines);
const temporalSetup = fleetTemporalFrom(values.temporal, values.workers);
const say = (line: string) =>
  process.stderr.write(
    `fleet ${machines}${temporalSetup.kind === 'cluster' ? ` (cluster, ${temporalSetup.workers} worker${temporalSetup.workers === 1 ? '' : 's'})` : ''}: ${line}\n`,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** How often the nodes are read: each read is a page of up to 1,000 nodes, part of the load measured. */
const pollMs = Math.min(5000, Math.max(1000, machines * 5));
/** A phase that has not ended by then is cut short: its unfinished nodes are reported with their state. */
const phaseDeadlineMs = 10 * 60_000 + machines * 3_000;
/** Pending nodes shown one by one once a phase has run this long and this few are left. */
const STRAGGLER_AFTER_MS = 60_000;
const STRAGGLERS_SHOWN = 5;
const clockTicksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

function fleetTemporalFrom(temporal: string | undefined, workers: string | undefined): FleetTemporal {
  if (temporal === 'dev') {
    if (workers !== undefined) throw new Error('--workers goes with --temporal cluster: on the dev server the worker runs in the control-plane process');
    return { kind: 'dev' };
  }
  if (temporal !== 'cluster') throw new Error(`--temporal ${temporal}: give dev (the Temporal dev server) or cluster (the real server on PostgreSQL)`);
  const count = Number(workers ?? '1');
  if (!Number.isInteger(count) || count < 1 || count > 8) throw new Error(`--workers ${workers}: give the number of control-plane worker processes, 1 to 8`);
  return { kind: 'cluster', workers: count };
}

/** The control plane as a child process: ready once it sent its URL and root bearer. */
async function startControlPlaneProcess(
  env: NodeJS.ProcessEnv,
  args: string[],
  stderrFile: string,
): Promise<{ child: ChildProcess; url: string; bearer: string }> {
  const child = fork(fileURLToPath(new URL('./control-plane.ts', import.meta.url)), args, {
    env,
    // Room for a large fleet's workflows and sessions (V8's default heap limit is about 4 GiB).
    execArgv: ['--max-old-space-size=8192', '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  const stderrLog = createWriteStream(stderrFile);
  child.stderr?.on('data', (d: Buffer) => {
    stderrLog.write(d);
    stderr = (stderr + d.toString()).slice(-4000);
  });
  child.once('exit', () => stderrLog.end());
  return new Promise((resolve, reject) => {
    child.on('message', (message: ControlPlaneMessage) => message.ready && resolve({ child, ...message.ready }));
    child.once('exit', (code) => reject(new Error(`the control-plane process exited (${code}) before it served: ${stderr}`)));
  });
}

function controlPlaneUsage(child: ChildProcess): Promise<{ cpuMs: number; rssBytes: number }> {
  return new Promise((resolve) => {
    const onMessage = (message: ControlPlaneMessage) => {
      if (!message.usage) return;
      child.off('message', onMessage);
      resolve(message.usage);
    };
    child.on('message', onMessage);
    child.send('usage');
  });
}

/**
 * The CPU time (with that of the children each reaped: PostgreSQL's ended backends) and the
 * memory (proportional set size: what they share counts once) of these processes together; one
 * that ended since it was listed counts nothing.
 */
async function processesUsage(pids: number[]): Promise<{ cpuMs: number; rssBytes: number }> {
  const each = await Promise.all(
    pids.map(async (pid) => {
      try {
        const [stat, smapsRollup] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/smaps_rollup`, 'utf8')]);
        // A process that has exited but is not yet reaped has no mappings.
        const pssBytes = procPssBytes(smapsRollup);
        return { ticks: procStatCpuTicks(stat) + procStatReapedChildrenTicks(stat), rssBytes: Number.isNaN(pssBytes) ? 0 : pssBytes };
      } catch {
        return { ticks: 0, rssBytes: 0 };
      }
    }),
  );
  return {
    cpuMs: (each.reduce((sum, p) => sum + p.ticks, 0) * 1000) / clockTicksPerSecond,
    rssBytes: each.reduce((sum, p) => sum + p.rssBytes, 0),
  };
}

async function main(): Promise<void> {
  const apiPort = await freePort();
  const stack = await (temporalSetup.kind === 'cluster' ? startClusterBenchStack : startBenchStack)('fleet', {
    // The installed OS joins the API's public URL (its user data's --server): the real port.
    IRONFLOW_API_PORT: String(apiPort),
    IRONFLOW_API_URL: `http://127.0.0.1:${apiPort}`,
    IRONFLOW_GATEWAY_PORT: String(await freePort()),
    IRONFLOW_AGENT_URL: 'https://downloads.example.com/ironflow-agent',
    IRONFLOW_AGENT_SHA256: sha256(Buffer.from('bench: the emulated OS runs the agent in-process')),
    IRONFLOW_LOG_LEVEL: 'warn',
  });
  const stoppers: Array<() => Promise<unknown>> = [() => stack.close()];
  let keepLogs = true;
  // The logs (site agent, machines, control plane, Temporal) outlive the run's directory when a machine did not finish or the run failed: they say why.
  const logDir = mkdtempSync(path.join(tmpdir(), `ironflow-bench-fleet-${machines}-logs-`));
  stoppers.push(async () => {
    if (!keepLogs) return rmSync(logDir, { recursive: true, force: true });
    // The dev stack's logs lie in its directory, the cluster's one level down (ironflow/api.log, temporal/temporal.log).
    for (const entry of readdirSync(stack.dir, { recursive: true, encoding: 'utf8' }).filter(
      (name) => name.endsWith('.log') && name.split(path.sep).length <= 2,
    )) {
      copyFileSync(path.join(stack.dir, entry), path.join(logDir, entry.replaceAll(path.sep, '-')));
    }
    say(`machines did not finish or the run failed: its logs are in ${logDir}`);
  });
  let stopping: Promise<void> | null = null;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of stoppers.reverse()) await stop().catch((err: unknown) => say(`stopping: ${String(err)}`));
    })());
  // Ctrl-C or a kill stops what the run started (worker processes, the cluster's PostgreSQL) and keeps its logs.
  const interrupted = (signal: NodeJS.Signals) => {
    say(`${signal}: stopping…`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    say('starting the control plane…');
    const signer = generateKeyPairSync('ed25519');
    const cp = await startControlPlaneProcess(
      {
        ...process.env,
        ...stack.env,
        BENCH_IMAGE_SIGNER_ID: 'bench-platform',
        BENCH_IMAGE_SIGNER_PEM: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      },
      temporalSetup.kind === 'cluster' ? ['--no-worker'] : [],
      path.join(logDir, 'control-plane.stderr.log'),
    );
    const cpExited = new Promise<void>((resolve) => cp.child.once('exit', () => resolve()));
    stoppers.push(async () => {
      cp.child.kill('SIGTERM');
      await cpExited;
    });
    // After the control plane: it made the data dir's secret-store key the workers read.
    const workers =
      temporalSetup.kind === 'cluster'
        ? await startWorkerProcesses({ ...process.env, ...stack.env }, stack.config, temporalSetup.workers, (_part, stop) => stoppers.push(stop))
        : [];
    const workerPids = workers.map((worker) => worker.child.pid as number);
    const api = new ApiClient(cp.url, cp.bearer);

    const site = await api.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'bench', idempotencyKey: 'bench-fleet' });
    // The fleet is emulated: its DCGM reports say so, and count only in a pool that allows emulated machines.
    const pool = await api.call<{ id: string }>('POST', '/v1/pools', {
      tenantId: 'root',
      siteId: site.id,
      class: 'bench-fleet',
      policy: { allowEmulatedMachines: true },
    });

    // A signed image on a local HTTPS server whose throwaway CA the ramdisks carry.
    const image = await serveLocalOsImage(api, {
      name: 'bench',
      raw: randomBytes(1024 * 1024),
      dir: path.join(stack.dir, 'image-tls'),
      signer: { id: 'bench-platform', privateKey: signer.privateKey },
    });
    stoppers.push(() => image.close());
    // The emulated deploy profile the e2e lifecycle runs (test/helpers/e2e-site.ts), with the demo's time limits.
    await api.call('POST', '/v1/profiles', { tenantId: 'root', document: { id: 'bench-os-host', version: 1, ...emulatedOsHostProfile(image.ref) } });

    // The site agent in this process, its boot server on a free loopback port.
    say('starting the site agent and the machines…');
    const token = await api.call<{ token: string }>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 600, maxUses: 1 });
    const agentConfig = writeLocalSiteAgentConfig(path.join(stack.dir, 'site-agent'), cp.url);
    const agentLog = path.join(logDir, 'site-agent.log');
    const agentLogStream = createWriteStream(agentLog);
    const machinesLogStream = createWriteStream(path.join(logDir, 'machines.log'));
    stoppers.push(async () => {
      agentLogStream.end();
      machinesLogStream.end();
    });
    const agent = await startSiteAgent(loadSiteAgentConfig(agentConfig), {
      env: { IRONFLOW_JOIN_TOKEN: token.token },
      log: new AgentLog((line) => void agentLogStream.write(`${line}\n`)),
    });
    stoppers.push(() => agent.stop());
    for (let i = 0; i < 300 && !agent.session.state().active; i++) await sleep(200);
    if (!agent.session.state().active) throw new Error(`the site agent did not take the boot lease within 60 s; its log is ${agentLog}`);

    // Firmware and boot waits scaled as the e2e tests scale them: the figure is the software's, not POST's.
    const fleet = await Fleet.start({
      dataDir: path.join(stack.dir, 'machines'),
      bootServerUrl: () => agent.bootServer?.url,
      installedOs: nodeAgentOs({ log: new AgentLog((line) => void machinesLogStream.write(`${line}\n`)) }),
      ramdiskTrustedCaPems: [image.caPem],
      sleepScale: 0.05,
      log: new AgentLog((line) => void machinesLogStream.write(`${line}\n`)),
    });
    stoppers.push(() => fleet.close());
    const bmcs = [];
    for (let i = 0; i < machines; i++) bmcs.push((await fleet.add({ diskBytes: 8 * 1024 * 1024 })).bmc);

    // The memos are sealed (services/sealing): listing workflows decodes them with the control plane's key.
    const temporal = new Client({
      connection: await Connection.connect(temporalConnectionOptions(stack.config.temporal)),
      namespace: stack.config.temporal.namespace,
      dataConverter: sealedDataConverter(stack.config),
    });
    stoppers.push(() => temporal.connection.close());

    // Usage: CPU from here to the end of the last phase; resident memory sampled at each read.
    const usage = async () => {
      const [apiProcess, workerProcesses, server] = await Promise.all([
        controlPlaneUsage(cp.child),
        processesUsage(workerPids),
        processesUsage(stack.serverPids()),
      ]);
      const controlPlane = { cpuMs: apiProcess.cpuMs + workerProcesses.cpuMs, rssBytes: apiProcess.rssBytes + workerProcesses.rssBytes };
      return { controlPlane, server, site: { cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000, rssBytes: process.memoryUsage.rss() } };
    };
    const peak = { controlPlaneAndTemporal: 0, site: 0 };
    const sample = async () => {
      const now = await usage();
      peak.controlPlaneAndTemporal = Math.max(peak.controlPlaneAndTemporal, now.controlPlane.rssBytes + now.server.rssBytes);
      peak.site = Math.max(peak.site, now.site.rssBytes);
    };

    /** Every node of the pool, read page by page. */
    const readNodes = async (): Promise<MetalNodeView[]> => {
      const nodes: MetalNodeView[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `/v1/metal/nodes?tenantId=root&poolId=${pool.id}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`;
        const page = await api.call<{ nodes: MetalNodeView[]; nextCursor: string | null }>('GET', query);
        nodes.push(...page.nodes);
        cursor = page.nextCursor;
      } while (cursor);
      return nodes;
    };

    /** A pending node's step and wait, as `ironflow metal status` shows them. */
    const straggler = async (nodeId: string): Promise<string> => {
      const status = await api.call<MetalStatusView>('GET', `/v1/metal/nodes/${nodeId}/status?tenantId=root`);
      const step = status.step ? `step ${status.step.key} (${status.step.use}, attempt ${status.step.attempt}, since ${status.step.startedAt})` : 'no step';
      return `${status.state ?? 'no state'}, ${step}, waiting for ${status.waitingFor ?? 'nothing'}`;
    };

    /** Waits until every node of `nodeIds` rests in `state` or has failed, or the deadline; what did not reach it is a miss. */
    const settle = async (nodeIds: Set<string>, state: string, started: number): Promise<{ seconds: number; reached: string[]; misses: NodeMiss[] }> => {
      let finishedAt = performance.now();
      for (;;) {
        await sample();
        const nodes = (await readNodes()).filter((n) => nodeIds.has(n.nodeId));
        const rested = (n: MetalNodeView) => n.workflowId === null;
        const reached = nodes.filter((n) => n.provisionState === state && rested(n));
        const failed = nodes.filter((n) => n.provisionState === 'failed' && rested(n));
        const pending = nodes.filter((n) => !reached.includes(n) && !failed.includes(n));
        const overdue = performance.now() - started > phaseDeadlineMs;
        say(
          `${state}: ${reached.length} reached, ${failed.length} failed, ${pending.length} on their way (${((performance.now() - started) / 1000).toFixed(0)} s)`,
        );
        // A few left long after the rest: say what each waits for (the stalls a run is read for).
        if (pending.length > 0 && pending.length <= STRAGGLERS_SHOWN && performance.now() - started > STRAGGLER_AFTER_MS) {
          for (const n of pending) say(`  ${n.nodeId}: ${await straggler(n.nodeId)}`);
        }
        if (pending.length === 0 || overdue) {
          if (pending.length === 0) finishedAt = performance.now();
          const why = (n: MetalNodeView) => (n.lastError ? `${n.lastError.code}: ${n.lastError.message}` : 'no lastError');
          return {
            seconds: ((pending.length === 0 ? finishedAt : performance.now()) - started) / 1000,
            reached: reached.map((n) => n.nodeId),
            misses: [
              ...failed.map((n) => ({ nodeId: n.nodeId, state: n.provisionState, reason: why(n) })),
              ...pending.map((n) => ({
                nodeId: n.nodeId,
                state: n.provisionState,
                reason: `still running at the phase's deadline (${phaseDeadlineMs / 60_000} min)${n.lastError ? `; lastError ${why(n)}` : ''}`,
              })),
            ],
          };
        }
        await sleep(pollMs);
      }
    };

    /** Sends one request per node at once; the answers' statuses. */
    const allAtOnce = async (requests: Array<() => Promise<{ status: number }>>) =>
      tallyStatuses((await Promise.all(requests.map((r) => r()))).map((a) => a.status));

    const phases: FleetPhase[] = [];
    const phaseStarts: number[] = [];
    const before = await usage();
    const callsBefore = await readCallCounts(cp.url, cp.bearer);
    await sample();

    say(`enrolling ${machines} machines at once…`);
    phaseStarts.push(Date.now());
    let started = performance.now();
    const enrolled = await Promise.all(
      bmcs.map((bmc) =>
        api.request<MetalNodeView>('POST', '/v1/metal/nodes', {
          tenantId: 'root',
          poolId: pool.id,
          bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
        }),
      ),
    );
    const enrolledIds = new Set(enrolled.filter((a) => a.status < 300).map((a) => a.body.nodeId));
    const enrolling = await settle(enrolledIds, 'ready', started);
    phases.push({
      name: 'enroll',
      seconds: enrolling.seconds,
      answered: tallyStatuses(enrolled.map((a) => a.status)),
      reached: enrolling.reached.length,
      misses: enrolling.misses,
    });

    say(`deploying ${enrolling.reached.length} machines at once…`);
    phaseStarts.push(Date.now());
    started = performance.now();
    const deployAnswers = await allAtOnce(
      enrolling.reached.map(
        (nodeId) => () => api.request('POST', `/v1/metal/nodes/${nodeId}/deploy`, { tenantId: 'root', profileId: 'bench-os-host', profileVersion: 1 }),
      ),
    );
    const deploying = await settle(new Set(enrolling.reached), 'deployed', started);
    phases.push({ name: 'deploy', seconds: deploying.seconds, answered: deployAnswers, reached: deploying.reached.length, misses: deploying.misses });

    say(`releasing ${deploying.reached.length} machines at once…`);
    phaseStarts.push(Date.now());
    started = performance.now();
    const releaseAnswers = await allAtOnce(
      deploying.reached.map((nodeId) => () => api.request('POST', `/v1/metal/nodes/${nodeId}/undeploy`, { tenantId: 'root' })),
    );
    const releasing = await settle(new Set(deploying.reached), 'ready', started);
    phases.push({ name: 'release', seconds: releasing.seconds, answered: releaseAnswers, reached: releasing.reached.length, misses: releasing.misses });

    keepLogs = phases.some((p) => p.misses.length > 0);
    const after = await usage();
    const callsAfter = await readCallCounts(cp.url, cp.bearer);
    await sample();

    // What the engine ran: every workflow by type, and each node's provision workflows per phase by step count.
    say('reading the workflows’ histories…');
    const workflowsByType: Record<string, number> = {};
    const provisions: Array<{ workflowId: string; nodeId: string; phase: number; startedAt: number }> = [];
    for await (const info of temporal.workflow.list()) {
      workflowsByType[info.type] = (workflowsByType[info.type] ?? 0) + 1;
      const nodeId = info.typedSearchAttributes.get(searchAttributeKeys.NodeId);
      if (info.type === 'provision' && nodeId)
        provisions.push({ workflowId: info.workflowId, nodeId, phase: phaseOf(info.startTime.getTime(), phaseStarts), startedAt: info.startTime.getTime() });
    }
    const steps = new Map<string, number>();
    for (let from = 0; from < provisions.length; from += 8)
      await Promise.all(
        provisions.slice(from, from + 8).map(async ({ workflowId }) => {
          const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
          const types = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
          steps.set(workflowId, stepCount(types));
        }),
      );
    const chains = phaseStarts.map((_, phase) => {
      const byNode = new Map<string, Array<{ startedAt: number; steps: number }>>();
      for (const p of provisions.filter((w) => w.phase === phase))
        byNode.set(p.nodeId, [...(byNode.get(p.nodeId) ?? []), { startedAt: p.startedAt, steps: steps.get(p.workflowId) ?? 0 }]);
      return commonChain([...byNode.values()].map((runs) => runs.sort((a, b) => a.startedAt - b.startedAt).map((r) => r.steps)));
    });

    const result: CycleResult = {
      machines,
      temporal: temporalSetup,
      phases,
      workflowsByType,
      chains,
      cpuMs: {
        controlPlane: Math.round(after.controlPlane.cpuMs - before.controlPlane.cpuMs),
        temporal: Math.round(after.server.cpuMs - before.server.cpuMs),
        site: Math.round(after.site.cpuMs - before.site.cpuMs),
      },
      peakRssBytes: peak,
      callsPerMachine: callsPerMachine(callsBefore, callsAfter, machines),
      callErrors: callErrors(callsBefore, callsAfter),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await stopAll();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
