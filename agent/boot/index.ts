// The site agent's boot server, wired from its `[boot]` section, identity and session: the
// HTTP side (iPXE scripts) and, as configured, proxy DHCP and TFTP. Each protocol lives in
// its own folder (http/, dhcp/, tftp/); this file only starts them together and stops them.
import { createHash } from 'node:crypto';
import { fromPem } from '../../core/pki/pem';
import type { ControlPlaneClient } from '../common/control-plane-client';
import type { AgentIdentity } from '../common/identity';
import type { AgentLog } from '../common/log';
import type { SessionState } from '../site/session';
import { SiteImageCache } from '../cache';
import { BootSecrets } from './boot-secrets';
import { bootServerConfigFrom, type BootServerConfig } from './config';
import type { BootEntryStore } from './entries';
import { DiscoveredPxeClients } from './discovered';
import type { BootServerMetrics } from './metrics';
import { startProxyDhcpServer, type ProxyDhcpServer } from './dhcp/server';
import { filesRoute } from './http/files-route';
import { cacheRoute } from './http/cache-route';
import { ipxeRoutes, type BootServerState } from './http/ipxe-routes';
import { startBootHttpServer, type BootHttpServer } from './http/server';
import { startTftpServer, type TftpServer } from './tftp/server';

export interface SiteBootServer extends BootHttpServer {
  config: BootServerConfig;
  secrets: BootSecrets;
  /** The image cache (data_dir/cache), served under grants at /cache/t/<grant>/<sha256>. */
  cache: SiteImageCache;
  /** PXE clients without a boot entry, from proxy DHCP and iPXE script fetches (the heartbeat reports them). */
  discovered: DiscoveredPxeClients;
}

/** sha256 (hex) of the node CA's DER: the pin a ramdisk checks the control plane's chain against. */
function caFingerprintOf(caPem: string): string {
  return createHash('sha256')
    .update(fromPem(caPem, ['CERTIFICATE'], 'ca'))
    .digest('hex');
}

export async function startSiteBootServer(options: {
  section: Record<string, unknown>;
  controlPlaneUrl: string;
  /** The site agent's control_plane_ca_file: ramdisks pin its first CA (if.tls). */
  controlPlaneCaPems?: string[];
  dataDir: string;
  client: ControlPlaneClient;
  identity: AgentIdentity;
  entries: BootEntryStore;
  session: () => SessionState;
  log: AgentLog;
  secrets?: BootSecrets;
  /** The site agent's [quorum] pinned_policies: ramdisks get them as if.quorum. */
  quorumPins?: readonly string[];
  /** Counts each protocol's answers and refusals (the site agent's /metrics). */
  metrics?: BootServerMetrics;
}): Promise<SiteBootServer> {
  const config = bootServerConfigFrom(options.section, { url: options.controlPlaneUrl, caPems: options.controlPlaneCaPems }, options.dataDir);
  const { identity, log, metrics } = options;
  const secrets =
    options.secrets ??
    new BootSecrets(options.client, identity, (entry, error) =>
      log.warn('discovery token not available yet', { mac: entry.mac, workflowId: entry.workflowId, error: error.message }),
    );
  const caPem = identity.chain[identity.chain.length - 1] as string;
  const state = (): BootServerState => {
    const s = options.session();
    return { active: s.active, epoch: s.epoch };
  };
  const cache = new SiteImageCache({
    dir: config.cacheDir,
    ...(config.cacheMaxBytes !== undefined ? { maxBytes: config.cacheMaxBytes } : {}),
    ...(config.cacheCaPems ? { trustedCaPems: config.cacheCaPems } : {}),
    log,
  });
  // One list for both doors: with proxy DHCP on, a script fetch counts only for a MAC DHCP listed.
  const discovered = new DiscoveredPxeClients((mac) => options.entries.get(mac) !== undefined);
  const routes = ipxeRoutes({
    config,
    entries: options.entries,
    secrets,
    state,
    identity: { nodeId: identity.current.nodeId, siteId: identity.current.siteId ?? '', signer: identity, caFingerprint: caFingerprintOf(caPem) },
    log,
    cacheGrants: cache.grants,
    sanbootReady: (sha256) => cache.store.has(sha256) && options.session().cacheImages.some((image) => image.sha256 === sha256 && image.format === 'iso'),
    discovered: { clients: discovered, onlyKnown: config.proxyDhcp },
    ...(options.quorumPins?.length ? { quorumPins: options.quorumPins } : {}),
  });
  routes.push(cacheRoute({ store: cache.store, grants: cache.grants, holdsLease: () => state().active && state().epoch > 0, log }));
  routes.push(filesRoute({ filesDir: config.filesDir, tftpRoot: config.tftpRoot }));
  const http = await startBootHttpServer({
    address: config.httpAddress,
    port: config.httpPort,
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    routes,
    log,
    ...(metrics ? { metrics } : {}),
  });
  let tftp: TftpServer | undefined;
  if (config.tftp) {
    // config.ts requires server_ip with tftp: replies leave from the address machines asked.
    tftp = await startTftpServer({
      address: config.serverIp as string,
      port: config.ports.tftp,
      root: config.tftpRoot,
      state,
      log,
      ...(metrics ? { metrics } : {}),
    }).catch(async (error: unknown) => {
      await http.close();
      throw error;
    });
  }
  let proxyDhcp: ProxyDhcpServer | undefined;
  if (config.proxyDhcp) {
    // chain.ipxe and HTTP-boot URLs: the public URL, else server_ip at the HTTP port.
    const httpBaseUrl = config.publicUrl ?? `http://${config.serverIp}:${http.port}`;
    proxyDhcp = await startProxyDhcpServer({ config, entries: options.entries, state, discovered, httpBaseUrl, log, ...(metrics ? { metrics } : {}) }).catch(
      async (error: unknown) => {
        await tftp?.close();
        await http.close();
        throw error;
      },
    );
  }
  log.info('boot server listening', { url: http.url, proxyDhcp: config.proxyDhcp, tftp: config.tftp });
  return {
    ...http,
    config,
    secrets,
    cache,
    discovered,
    close: async () => {
      await proxyDhcp?.close();
      await tftp?.close();
      await http.close();
    },
  };
}
