// The site agent's boot server, wired from its `[boot]` section, identity and session.
import { createHash } from 'node:crypto';
import { fromPem } from '../../core/pki/pem';
import type { ControlPlaneClient } from '../site/control-plane-client';
import type { AgentIdentity } from '../site/identity';
import type { AgentLog } from '../site/log';
import type { SessionState } from '../site/session';
import { BootSecrets } from './boot-secrets';
import { bootServerConfigFrom } from './config';
import type { BootEntryStore } from './entries';
import { startBootServer, type BootServer } from './server';

export interface SiteBootServer extends BootServer {
  secrets: BootSecrets;
}

/** sha256 (hex) of the node CA's DER: the pin a ramdisk checks the control plane's chain against. */
export function caFingerprintOf(caPem: string): string {
  return createHash('sha256').update(fromPem(caPem, ['CERTIFICATE'], 'ca')).digest('hex');
}

export async function startSiteBootServer(options: {
  section: Record<string, unknown>;
  controlPlaneUrl: string;
  client: ControlPlaneClient;
  identity: AgentIdentity;
  entries: BootEntryStore;
  session: () => SessionState;
  log: AgentLog;
  secrets?: BootSecrets;
}): Promise<SiteBootServer> {
  const config = bootServerConfigFrom(options.section, options.controlPlaneUrl);
  if (config.proxyDhcp) options.log.warn('[boot] proxy_dhcp/tftp are not served by this build: machines must get iPXE and /boot/chain.ipxe from your DHCP server');
  const { identity, log } = options;
  const secrets =
    options.secrets ??
    new BootSecrets(options.client, identity, (entry, error) => log.warn('discovery token not available yet', { mac: entry.mac, workflowId: entry.workflowId, error: error.message }));
  const caPem = identity.chain[identity.chain.length - 1] as string;
  const server = await startBootServer({
    config,
    entries: options.entries,
    secrets,
    state: () => {
      const s = options.session();
      return { active: s.active, epoch: s.epoch };
    },
    identity: { nodeId: identity.current.nodeId, siteId: identity.current.siteId ?? '', signer: identity, caFingerprint: caFingerprintOf(caPem) },
    log,
  });
  return { ...server, secrets };
}
