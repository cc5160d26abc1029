// The site agent: join once (or load the identity), keep the session (heartbeats, lease,
// fencing, renewal), and run the worker for the site step kinds. `runSiteAgent` is the
// foreground program (`ironflow agent site --config FILE`) and stops cleanly on
// SIGINT/SIGTERM; `startSiteAgent` is the same agent for callers that own the process.
import { startSiteBootServer, type SiteBootServer } from '../boot';
import { runUntilSignal } from '../common/run-until-signal';
import { BootEntryStore } from '../boot/entries';
import { BootServerMetrics } from '../boot/metrics';
import { loadSiteAgentConfig, type SiteAgentConfig } from './config';
import { ControlPlaneClient } from '../common/control-plane-client';
import { loadOrCreateKey, type AgentIdentity } from '../common/identity';
import { ensureJoined } from './join';
import { AgentLog } from '../common/log';
import { startMetricsListener, type MetricsListener } from '../../services/metrics/listener';
import { networkList } from './networks';
import { RemoteOperationLedger } from './remote-operation-ledger';
import { CertificateRenewer } from '../common/renew';
import { SiteSession } from './session';
import { createSiteSteps } from './steps';
import { startSiteWorker, type SiteWorker } from './worker';
import { installWorkerRuntime } from '../../worker/runtime';

/** media.insert's cache URL: the verified copy under a one-digest grant, for a BMC to read. */
function cachedMediaUrlOf(bootServer: SiteBootServer): (sha256: string) => string | undefined {
  return (sha256) => (bootServer.cache.store.has(sha256) ? `${bootServer.url}/cache/t/${bootServer.cache.grants.firmwareGrant(sha256)}/${sha256}` : undefined);
}

export interface SiteAgent {
  identity: AgentIdentity;
  session: SiteSession;
  renewer: CertificateRenewer;
  log: AgentLog;
  /** The boot server, when the config has a `[boot]` section. */
  bootServer?: SiteBootServer;
  /** GET /metrics, when the config has `[metrics] address`. */
  metrics?: MetricsListener;
  stop(): Promise<void>;
}

export async function startSiteAgent(config: SiteAgentConfig, options: { env?: NodeJS.ProcessEnv; log?: AgentLog } = {}): Promise<SiteAgent> {
  const log = options.log ?? new AgentLog();
  // Before any connection: the process's Temporal runtime is installed once, with its exporter.
  if (config.temporalSdkMetricsAddress)
    installWorkerRuntime({ metricsAddress: config.temporalSdkMetricsAddress, metricsSetting: '[metrics] temporal_sdk_address' });
  const client = new ControlPlaneClient(config.controlPlaneUrl, undefined, { caPems: config.controlPlaneCaPems });
  const key = loadOrCreateKey(config.dataDir);
  const identity = await ensureJoined(config, key, client, log, options.env ?? process.env);
  const renewer = new CertificateRenewer(identity, client, config, log);
  const session = new SiteSession(identity, client, renewer, log);
  session.start();
  let worker: SiteWorker | undefined;
  let bootServer: SiteBootServer | undefined;
  let metrics: MetricsListener | undefined;
  const bootMetrics = new BootServerMetrics();
  const bootEntries = new BootEntryStore(config.dataDir);
  try {
    await session.firstAnswer();
    if (config.metricsAddress)
      metrics = await startMetricsListener({
        address: config.metricsAddress,
        registry: bootMetrics.registry,
        temporalSdkAddress: config.temporalSdkMetricsAddress,
        setting: { name: '[metrics] address', path: 'metrics.address' },
        log,
      });
    if (config.boot) {
      bootServer = await startSiteBootServer({
        section: config.boot,
        controlPlaneUrl: config.controlPlaneUrl,
        controlPlaneCaPems: config.controlPlaneCaPems,
        dataDir: config.dataDir,
        client,
        identity,
        entries: bootEntries,
        session: () => session.state(),
        log,
        quorumPins: config.quorumPins,
        metrics: bootMetrics,
      });
      // The cache pulls what each answer names (pre-warm and pinned images); heartbeats report it.
      const cache = bootServer.cache;
      session.reportCacheWith(() => cache.report(bootEntries.list()));
      session.reportDiscoveredWith(bootServer.discovered);
      session.on('answer', (state) => cache.want(state.cacheImages, state.pinnedImages));
      cache.want(session.state().cacheImages, session.state().pinnedImages);
    }
    const steps = createSiteSteps({
      client,
      signer: identity,
      // Shared with the site's other agents through the control plane (a re-routed step reuses what was sent).
      ledgerFor: (input) => new RemoteOperationLedger(client, identity, input),
      log,
      bootEntries,
      ...(bootServer ? { bootSecrets: bootServer.secrets } : {}),
      bmcNetworks: networkList(config.bmcNetworks),
      session: () => session.state(),
      drivenBmcHosts: new Set(),
      ...(bootServer ? { cachedMediaUrl: cachedMediaUrlOf(bootServer) } : {}),
      quorumPins: config.quorumPins,
    });
    const startWorker = () => startSiteWorker({ temporal: identity.current.temporal, credentials: { chain: identity.chain, key: identity.key }, steps });
    worker = await startWorker();
    // The gateway knows the worker by the certificate its connection presented: after a
    // renewal a new connection presents the new one, before the old certificate expires.
    renewer.onRenewed(() => {
      void (async () => {
        const previous = worker;
        worker = await startWorker();
        await previous?.stop();
        log.info('worker reconnected with the renewed certificate', { nodeId: identity.current.nodeId });
      })().catch((error: unknown) =>
        log.warn('reconnecting the worker after renewal failed; the old certificate serves until it expires', { error: (error as Error).message }),
      );
    });
    log.info('site agent running', { nodeId: identity.current.nodeId, siteId: identity.current.siteId, taskQueue: identity.current.temporal.taskQueue });
  } catch (error) {
    await bootServer?.close();
    await metrics?.close();
    await session.stop();
    throw error;
  }
  return {
    identity,
    session,
    renewer,
    log,
    ...(bootServer ? { bootServer } : {}),
    ...(metrics ? { metrics } : {}),
    async stop() {
      await worker?.stop();
      await bootServer?.close();
      await metrics?.close();
      await session.stop();
      log.info('site agent stopped', { nodeId: identity.current.nodeId });
    },
  };
}

/** Runs in the foreground until SIGINT or SIGTERM. */
export async function runSiteAgent(configFile: string): Promise<void> {
  await runUntilSignal(await startSiteAgent(loadSiteAgentConfig(configFile)));
}
