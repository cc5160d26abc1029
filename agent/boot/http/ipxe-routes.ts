// The boot server's iPXE scripts (spec 001, "The boot server"): GET /boot/chain.ipxe and
// GET /boot/ipxe. Query fields are taken only when well-formed, and a script is rendered
// only for a MAC with a live boot entry while this agent is the active boot server. Every
// ramdisk script carries a fresh signed discovery assertion. A fetch naming a MAC without
// an entry, while active, is listed as discovered (spec 001).
import type http from 'node:http';
import { isIP } from 'node:net';
import { normalizeMac } from '../../../core/mac';
import type { BootEntry, RamdiskBootEntry } from '../../../core/boot/boot-entry';
import type { CacheGrants } from '../../cache/grants';
import type { AgentLog } from '../../common/log';
import type { Signer } from '../../common/control-plane-client';
import { signDiscoveryAssertion } from '../assertion';
import { throttledLog } from '../throttled-log';
import type { BootSecrets } from '../boot-secrets';
import type { BootServerConfig } from '../config';
import type { DiscoveredPxeClients } from '../discovered';
import type { BootEntryStore } from '../entries';
import { chainScript, imageNotReadyScript, notActiveScript, ramdiskScript, retryScript, sanbootScript, unknownMachineScript } from '../ipxe/script';
import { baseUrlFor, remoteIp, sendText, type BootHttpRoute } from './server';

const TOKEN_WAIT_SECONDS = 5;
const SANBOOT_WAIT_SECONDS = 30;
const ARCH_FIELD_MAX = 32;
const uuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export interface BootServerState {
  /** Holds the boot lease at a non-zero epoch and heard from the control plane within the TTL. */
  active: boolean;
  epoch: number;
}

interface IpxeRouteDeps {
  config: BootServerConfig;
  entries: BootEntryStore;
  secrets: BootSecrets;
  state: () => BootServerState;
  identity: { nodeId: string; siteId: string; signer: Signer; caFingerprint: string };
  log: AgentLog;
  /** The image cache's grants: a ramdisk script carries a boot grant as if.cache, a sanboot script one for its ISO. */
  cacheGrants?: CacheGrants;
  /** A sanboot ISO is served only when the site names it as an iso cache image and its verified copy is cached. */
  sanbootReady?: (sha256: string) => boolean;
  /** Where script fetches from MACs without an entry are listed; `onlyKnown` while proxy DHCP runs (anyone can fetch a URL). */
  discovered?: { clients: DiscoveredPxeClients; onlyKnown: boolean };
  /** The site's pinned quorum policies (if.quorum): the ramdisk checks wipes and deploys against them. */
  quorumPins?: readonly string[];
}

type MachineQuery = { mac: string | undefined; uuid: string | null; ip: string | null };

/** Only well-formed fields of the query: anything else is as if it were absent. */
export function machineQuery(url: URL): MachineQuery {
  const field = (name: string, max: number) => {
    const value = url.searchParams.get(name);
    return value !== null && value.length <= max ? value : undefined;
  };
  const macText = field('mac', 32);
  const uuid = field('uuid', 36);
  const ip = field('ip', 45);
  return {
    mac: macText ? normalizeMac(macText) : undefined,
    uuid: uuid && uuidPattern.test(uuid) ? uuid.toLowerCase() : null,
    ip: ip && isIP(ip) ? ip : null,
  };
}

export function ipxeRoutes(deps: IpxeRouteDeps): BootHttpRoute[] {
  const { config, log } = deps;
  // Anyone on the network can fetch with any MAC: these lines are bounded per second.
  const logRefused = throttledLog(log, 'info', 'boot script refused: no boot entry for this MAC');

  /** A script fetch from a MAC with no live entry, while active: a sighting (no relay over HTTP). True when the MAC is new to the list. */
  function noteUnknownFetch(query: MachineQuery, url: URL): boolean {
    if (!deps.discovered || !query.mac) return false;
    const arch = url.searchParams.get('arch');
    const sighting = { mac: query.mac, uuid: query.uuid, arch: arch !== null && arch.length <= ARCH_FIELD_MAX ? arch : 'unknown', giaddr: null };
    return deps.discovered.clients.recordFetch(sighting, { onlyKnown: deps.discovered.onlyKnown });
  }

  async function renderFor(entry: RamdiskBootEntry, query: MachineQuery, req: http.IncomingMessage, state: BootServerState): Promise<string> {
    const token = await deps.secrets.tokenFor(entry);
    if (!token) return retryScript(`${baseUrlFor(req, config.publicUrl)}/boot/ipxe?mac=${entry.mac}`, TOKEN_WAIT_SECONDS);
    const assertion = signDiscoveryAssertion(
      { signer: deps.identity.signer, siteId: deps.identity.siteId, agentNodeId: deps.identity.nodeId, epoch: state.epoch },
      entry,
      { ip: query.ip ?? remoteIp(req), productUuid: query.uuid },
    );
    const base = baseUrlFor(req, config.publicUrl);
    // Kept short: the kernel command line holds 2,048 bytes on x86 and the script uses most.
    const cache: Array<[string, string]> = deps.cacheGrants ? [['cache', `${base}/cache/t/${deps.cacheGrants.bootGrant(entry)}`]] : [];
    return ramdiskScript({
      kernel: config.kernel,
      initrd: config.initrd,
      params: [
        ['gateway', config.gatewayUrl],
        ['ca', deps.identity.caFingerprint],
        ...(config.gatewayCaPin ? ([['tls', config.gatewayCaPin]] as Array<[string, string]>) : []),
        ['mac', entry.mac],
        ['token', token],
        ['assertion', assertion],
        ...cache,
        ...(deps.quorumPins?.length ? ([['quorum', deps.quorumPins.join(',')]] as Array<[string, string]>) : []),
      ],
      cmdline: config.cmdline,
    });
  }

  function sendSanboot(entry: BootEntry, sha256: string, req: http.IncomingMessage, res: http.ServerResponse): void {
    const base = baseUrlFor(req, config.publicUrl);
    if (!deps.cacheGrants || !deps.sanbootReady?.(sha256)) {
      log.warn('sanboot: the ISO is not cached and verified (or not named as an iso cache image): the machine waits', {
        mac: entry.mac,
        nodeId: entry.nodeId,
        workflowId: entry.workflowId,
        sha256,
      });
      return sendText(res, 503, imageNotReadyScript(`${base}/boot/ipxe?mac=${entry.mac}`, SANBOOT_WAIT_SECONDS));
    }
    log.info('sanboot script served', { mac: entry.mac, nodeId: entry.nodeId, workflowId: entry.workflowId, sha256 });
    sendText(res, 200, sanbootScript(`${base}/cache/t/${deps.cacheGrants.bootGrant(entry, sha256)}/${sha256}`));
  }

  return [
    {
      path: '/boot/chain.ipxe',
      exact: true,
      handle: async (req, res, url) => {
        const state = deps.state();
        const query = machineQuery(url);
        if (state.active && state.epoch > 0 && query.mac && !deps.entries.get(query.mac) && noteUnknownFetch(query, url)) {
          log.info('chain.ipxe fetched by a MAC without a boot entry (listed as discovered)', { mac: query.mac });
        }
        sendText(res, 200, chainScript(baseUrlFor(req, config.publicUrl)));
      },
    },
    {
      path: '/boot/ipxe',
      exact: true,
      async handle(req, res, url) {
        const state = deps.state();
        if (!state.active || state.epoch <= 0) return sendText(res, 503, notActiveScript);
        const query = machineQuery(url);
        const entry = query.mac ? deps.entries.get(query.mac) : undefined;
        if (!entry) {
          const listed = noteUnknownFetch(query, url);
          logRefused({ mac: query.mac ?? null, ...(listed ? { listedAsDiscovered: true } : {}) });
          return sendText(res, 404, unknownMachineScript);
        }
        if (entry.sanbootSha256) return sendSanboot(entry, entry.sanbootSha256, req, res);
        const script = await renderFor(entry as RamdiskBootEntry, query, req, state);
        log.info(script.includes('kernel ') ? 'boot script served' : 'boot script: waiting for the discovery token', {
          mac: entry.mac,
          nodeId: entry.nodeId,
          workflowId: entry.workflowId,
          epoch: state.epoch,
        });
        sendText(res, 200, script);
      },
    },
  ];
}
