// The end-to-end site the metal lifecycle tests run on, with nothing fake but the hardware:
// a real control plane (API, database, the control-plane worker in this process or as a
// process a test may SIGKILL) on the run's Temporal dev server or a dedicated one; a real
// site agent (in this process, or as a process killed and restarted on its data dir, its
// boot server on a fixed port); emulated machines (Redfish BMCs, PXE firmware) booting real
// ramdisk agents and an installed OS running the real node agent; and signed images served
// over HTTPS with a throwaway CA the ramdisks carry (a served image can be held mid-stream).
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { inject } from 'vitest';
import { Fleet } from '../../agent/emulator/fleet';
import { nodeAgentOs } from '../../agent/emulator/installed-os';
import type { Machine } from '../../agent/emulator/machine';
import { AgentLog } from '../../agent/common/log';
import { temporalTlsEnv, type IronflowConfig, type TemporalTlsSettings } from '../../services/config';
import { spkiPinOf } from '../../services/ca-pin';
import { addImageSigner } from '../../services/images/signers';
import { emulatedOsHostProfile } from '../../stack/local-os-image';
import { imageSigningInput } from '../../core/images/signing-input';
import type { MetalNodeView } from '../../core/schemas/metal';
import { activeAgent, startBootSite, until, type BootSite } from './boot-site';
import { testConfig } from './control-plane';
import { activitiesRun } from './history-activities';
import { freePort } from './ports';
import { siteAgentFixture } from './site-agent';
import { spawnSiteAgent, type AgentProcess } from './agent-process';
import { startWorkerProcess, type WorkerProcess } from './worker-process';
import { makeServerCertificate } from './tls';

export const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

export interface E2eSiteOptions {
  /** A dedicated Temporal dev server's frontend (host:port); default: the run's. */
  temporalAddress?: string;
  /** The Temporal namespace (a cluster's, say: test/e2e/cluster-lifecycle.test.ts); default temporal-dev.yaml's. */
  temporalNamespace?: string;
  /** TLS to that frontend (a cluster's CA and client certificate), for the API and the worker process alike. */
  temporalTls?: TemporalTlsSettings;
  /** The control-plane worker as its own process (SIGKILL-able), not in this process. */
  workerProcess?: boolean;
  /** The site agent as its own process (SIGKILL-able, restarted on the same data dir and boot port). */
  siteAgentProcess?: boolean;
  /**
   * Where machines reach the control plane (a test network's relay to this host, e.g. QEMU
   * guests): the API's public URL (the user data's --server) and the agent gateway address
   * Join hands agents use this host at the same ports instead of 127.0.0.1.
   */
  machineFacingHost?: string;
  /**
   * Starts the site agent some other way (in a network namespace, say); it gets the image
   * server's port and CA, and the API's CA (the API is on TLS with a machine-facing host).
   */
  startSiteAgent?: (site: BootSite, images: { port: number; caPem: string }, api: { caPem?: string }) => Promise<E2eSiteAgent>;
}

/** The site agent, wherever it runs. */
export interface E2eSiteAgent {
  dataDir: string;
  bootServerUrl(): string | undefined;
  /** Its log lines (a process agent's; none in process). */
  lines(): string[];
  /** SIGKILL (a process agent only): no session close, no worker shutdown. */
  kill(): void;
  /** Starts it again on its data dir (no rejoin) and waits until it is the active boot server. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** One image download: the test may hold it after its first bytes. */
export interface ImageHold {
  /** Resolves once the first bytes of the image went out. */
  reached: Promise<void>;
  release(): void;
}

export interface E2eSite extends BootSite {
  poolId: string;
  fleet: Fleet;
  agent: E2eSiteAgent;
  worker: WorkerProcess | undefined;
  /** The ramdisks' and machines' log lines (JSON). */
  fleetLog: string[];
  /** GETs of each served image path. */
  imageFetches: Map<string, number>;
  /** Serves `name` (a path such as /x.raw.gz). */
  serve(name: string, body: Buffer): void;
  /** The next download of `name` stops after its first bytes until released. */
  holdImage(name: string): ImageHold;
  /** Registers a gzip image served by the image server, signed by the platform signer; returns its id, digest and path. */
  registerImage(ref: string, content: Buffer): Promise<{ id: string; sha256: string; path: string }>;
  /** A host profile deploying `imageRef`: userdata.render, ensureRamdisk, deploy.deploy, boot from disk, kexec awaiting the OS's join. */
  deployProfile(id: string, imageRef: string): Promise<void>;
  get(nodeId: string): Promise<MetalNodeView>;
  verb(nodeId: string, name: string, body?: Record<string, unknown>): Promise<MetalNodeView>;
  /** Waits until the node rests in `state` (no workflow); on timeout says where it stands. */
  settle(nodeId: string, state: string, timeoutMs?: number): Promise<MetalNodeView>;
  /** Enrolls `count` machines by their BMC alone and waits until all are ready. */
  enrollToReady(count: number, timeoutMs?: number): Promise<Array<{ nodeId: string; machine: Machine; ready: MetalNodeView }>>;
  /** The activities the workflow ran, tasks and local ones, by type in order (history-activities.ts). */
  activitiesRun(workflowId: string): Promise<string[]>;
  stateWorkflows(nodeId: string): Promise<string[]>;
  bootEntries(): Array<{ nodeId: string }>;
  liveTokens(nodeId: string): Promise<number>;
  /** Starts a (new) control-plane worker process (workerProcess only). */
  startWorker(): Promise<WorkerProcess>;
  close(): Promise<void>;
}

export async function startE2eSite(key: string, options: E2eSiteOptions = {}): Promise<E2eSite> {
  const apiPort = await freePort();
  // Fixed before start: the worker process and machines off loopback must know it.
  const gatewayPort = await freePort();
  // Machines off loopback reach the API over TLS only (agents refuse plain http there): a
  // throwaway CA, a certificate naming the machine-facing host, the chain served, its CA pinned.
  const apiTls = options.machineFacingHost
    ? makeServerCertificate(mkdtempSync(path.join(inject('runDir'), 'api-tls-')), 'api.e2e', [options.machineFacingHost])
    : undefined;
  const apiCaPin = apiTls ? spkiPinOf(apiTls.caPem) : undefined;
  // The installed OS joins the API's public URL (the user data's --server), so it must be the real port.
  const env: Record<string, string> = {
    IRONFLOW_API_PORT: String(apiPort),
    IRONFLOW_API_URL: `${apiTls ? 'https' : 'http'}://${options.machineFacingHost ?? '127.0.0.1'}:${apiPort}`,
    // The user data's --serving-ca-pin; pins come as a set of three and the join pins are not checked yet (docs/lifecycle.md).
    ...(apiTls && apiCaPin
      ? {
          IRONFLOW_API_TLS_CERT: apiTls.chainFile,
          IRONFLOW_API_TLS_KEY: apiTls.keyFile,
          IRONFLOW_SERVING_CA_PIN: apiCaPin,
          IRONFLOW_JOIN_SIGNING_PIN: apiCaPin,
          IRONFLOW_JOIN_ENCRYPTION_PIN: apiCaPin,
        }
      : {}),
    IRONFLOW_GATEWAY_PORT: String(gatewayPort),
    ...(options.machineFacingHost ? { IRONFLOW_AGENT_GATEWAY_ADDRESS: `${options.machineFacingHost}:${gatewayPort}` } : {}),
    IRONFLOW_AGENT_URL: 'https://downloads.example.com/ironflow-agent',
    IRONFLOW_AGENT_SHA256: sha(Buffer.from('the published agent')),
    ...(options.temporalAddress ? { IRONFLOW_TEMPORAL_ADDRESS: options.temporalAddress } : {}),
    ...(options.temporalNamespace ? { IRONFLOW_TEMPORAL_NAMESPACE: options.temporalNamespace } : {}),
    ...(options.temporalTls ? temporalTlsEnv(options.temporalTls) : {}),
  };
  const config = await testConfig(env);
  // E2E_API_LOG=1 shows the API's errors (a 500's cause) while debugging.
  const site = await startBootSite(key, { config, worker: !options.workerProcess, ...(process.env.E2E_API_LOG ? { logger: { level: 'error' } } : {}) });
  const workers = new Set<WorkerProcess>();
  const startWorker = async () => {
    const worker = await startWorkerProcess(config, env);
    workers.add(worker);
    void worker.child.once('exit', () => workers.delete(worker));
    return worker;
  };
  const worker = options.workerProcess ? await startWorker() : undefined;

  // The image server: HTTPS with a site CA the ramdisks carry.
  const served = new Map<string, Buffer>();
  const imageFetches = new Map<string, number>();
  const holds = new Map<string, { reached: () => void; released: Promise<void> }>();
  const tls = makeServerCertificate(mkdtempSync(path.join(config.dataDir, 'tls-')), 'images.e2e');
  const imageServer = https.createServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, (req, res) => {
    const name = req.url ?? '';
    const body = served.get(name);
    if (!body) return void res.writeHead(404).end();
    imageFetches.set(name, (imageFetches.get(name) ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    const hold = holds.get(name);
    if (!hold) return void res.end(body);
    holds.delete(name);
    const head = Math.min(64 * 1024, body.length - 1);
    res.write(body.subarray(0, head), () => hold.reached());
    void hold.released.then(() => res.end(body.subarray(head)));
  });
  await new Promise<void>((r) => imageServer.listen(0, '127.0.0.1', () => r()));
  const imagePort = (imageServer.address() as AddressInfo).port;
  const agent = options.startSiteAgent
    ? await options.startSiteAgent(site, { port: imagePort, caPem: tls.caPem }, { caPem: apiTls?.caPem })
    : options.siteAgentProcess
      ? await processAgent(site)
      : await inProcessAgent(site);
  const imageBase = `https://127.0.0.1:${imagePort}`;
  // The fleet is emulated: its DCGM reports say so, and count only in a pool that allows emulated machines.
  const poolId = (
    await site.t.root.call<{ id: string }>('POST', '/v1/pools', {
      tenantId: 'root',
      siteId: site.siteId,
      class: 'e2e-metal',
      policy: { allowEmulatedMachines: true },
    })
  ).id;
  const signer = generateKeyPairSync('ed25519');
  await addImageSigner(site.t.cp.db, {
    tenantId: 'root',
    id: 'e2e-platform',
    publicKeyPem: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  });

  const fleetLog: string[] = [];
  const fleet = await Fleet.start({
    dataDir: path.join(config.dataDir, 'fleet'),
    bootServerUrl: () => agent.bootServerUrl(),
    installedOs: nodeAgentOs(),
    ramdiskTrustedCaPems: [tls.caPem],
    sleepScale: 0.05,
    log: new AgentLog((line) => void fleetLog.push(line)),
  });

  const get = (nodeId: string) => site.t.root.call<MetalNodeView>('GET', `/v1/metal/nodes/${nodeId}?tenantId=root`);
  const settle = async (nodeId: string, state: string, timeoutMs = 90_000): Promise<MetalNodeView> => {
    let last: MetalNodeView | undefined;
    try {
      return await until(
        `${nodeId} to rest in ${state}`,
        async () => {
          last = await get(nodeId);
          return last.provisionState === state && last.workflowId === null ? last : undefined;
        },
        timeoutMs,
      );
    } catch (error) {
      // Say where it stands: the state workflow's pending activities and their last failures.
      const pending = last?.workflowId
        ? (
            (
              await site.t.cp.temporal.workflow
                .getHandle(last.workflowId)
                .describe()
                .catch(() => undefined)
            )?.raw.pendingActivities ?? []
          ).map((a) => ({ type: a.activityType?.name, attempt: a.attempt, failure: a.lastFailure?.message }))
        : [];
      throw new Error(
        `${(error as Error).message}; last: ${JSON.stringify({ state: last?.provisionState, workflowId: last?.workflowId, lastError: last?.lastError, pending })}`,
      );
    }
  };

  return {
    ...site,
    poolId,
    fleet,
    agent,
    worker,
    fleetLog,
    imageFetches,
    startWorker,
    serve: (name, body) => void served.set(name, body),
    holdImage(name) {
      let reached!: () => void;
      let release!: () => void;
      const hold: ImageHold = { reached: new Promise<void>((r) => (reached = r)), release: () => release() };
      holds.set(name, { reached, released: new Promise<void>((r) => (release = r)) });
      return hold;
    },
    async registerImage(ref, content) {
      const gz = gzipSync(content);
      const name = `/${ref.replace('@', '-')}.raw.gz`;
      served.set(name, gz);
      const input = {
        tenantId: 'root',
        ref,
        kind: 'os',
        format: 'raw',
        compression: 'gzip',
        sha256: sha(gz),
        sizeBytes: gz.length,
        source: `${imageBase}${name}`,
      };
      const signature = sign(null, imageSigningInput(input), signer.privateKey).toString('base64');
      const image = await site.t.root.call<{ id: string; verified: boolean }>('POST', '/v1/images', { ...input, signerId: 'e2e-platform', signature });
      if (!image.verified) throw new Error(`image ${ref} was not verified`);
      return { id: image.id, sha256: input.sha256, path: name };
    },
    async deployProfile(id, imageRef) {
      await site.t.root.call('POST', '/v1/profiles', {
        tenantId: 'root',
        document: { id, version: 1, ...emulatedOsHostProfile(imageRef, { boot: '3m', deploy: '2m', rejoin: '2m' }) },
      });
    },
    get,
    verb: (nodeId, name, body = {}) => site.t.root.call<MetalNodeView>('POST', `/v1/metal/nodes/${nodeId}/${name}`, { tenantId: 'root', ...body }),
    settle,
    async enrollToReady(count, timeoutMs = 150_000) {
      const enrolled: Array<{ nodeId: string; machine: Machine }> = [];
      for (let i = 0; i < count; i++) {
        const { machine, bmc } = await fleet.add({ diskBytes: 8 * 1024 * 1024 });
        const node = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
          tenantId: 'root',
          poolId,
          bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
        });
        if (node.provisionState !== 'enrolling') throw new Error(`enrolled ${node.nodeId} is ${node.provisionState}`);
        enrolled.push({ nodeId: node.nodeId, machine });
      }
      const ready = await Promise.all(enrolled.map((n) => settle(n.nodeId, 'ready', timeoutMs)));
      return enrolled.map((n, i) => ({ ...n, ready: ready[i] as MetalNodeView }));
    },
    async activitiesRun(workflowId) {
      return activitiesRun(await site.t.cp.temporal.workflow.getHandle(workflowId).fetchHistory());
    },
    async stateWorkflows(nodeId) {
      const ids: string[] = [];
      for await (const w of site.t.cp.temporal.workflow.list({ query: `NodeId = "${nodeId}" AND WorkflowType = "provision"` })) ids.push(w.workflowId);
      return ids;
    },
    bootEntries() {
      const file = path.join(agent.dataDir, 'boot-entries.json');
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { entries: Array<{ nodeId: string }> }).entries : [];
    },
    liveTokens: (nodeId) => site.t.cp.db.joinToken.count({ where: { nodeId, revokedAt: null, usesLeft: { gt: 0 }, expiresAt: { gt: new Date() } } }),
    async close() {
      await fleet.close();
      await agent.stop();
      imageServer.closeAllConnections();
      imageServer.close();
      await Promise.all([...workers].map((w) => w.kill()));
      await site.t.close();
    },
  };
}

async function inProcessAgent(site: BootSite): Promise<E2eSiteAgent> {
  const agent = await site.startAgent();
  await activeAgent(agent);
  return {
    dataDir: agent.identity.dataDir,
    bootServerUrl: () => agent.bootServer?.url,
    lines: () => [],
    kill: () => {
      throw new Error('an in-process site agent cannot be killed: start the site with siteAgentProcess');
    },
    restart: () => Promise.reject(new Error('an in-process site agent is not restarted here')),
    stop: () => agent.stop(),
  };
}

async function processAgent(site: BootSite): Promise<E2eSiteAgent> {
  const bootPort = await freePort();
  const fixture = siteAgentFixture(site.t.cp.url, { bootPort });
  let running: AgentProcess = spawnSiteAgent(fixture.configFile, { IRONFLOW_JOIN_TOKEN: site.siteToken });
  const active = async () => {
    await running.waitForLog('holding the boot lease: active boot server', 60_000);
  };
  await active();
  return {
    dataDir: path.join(fixture.dir, 'data'),
    bootServerUrl: () => `http://127.0.0.1:${bootPort}`,
    lines: () => running.lines,
    kill: () => void running.child.kill('SIGKILL'),
    async restart() {
      await running.exited;
      running = spawnSiteAgent(fixture.configFile);
      await active();
    },
    async stop() {
      if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGTERM');
      await running.exited;
    },
  };
}

export type { Machine };
