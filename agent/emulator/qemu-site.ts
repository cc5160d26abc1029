// A site of QEMU machines on this host (`ironflow dev emulate --qemu`, `npm run demo --
// --qemu`): a namespace network (agent/emulator/qemu-network.ts) with dnsmasq giving addresses
// only, the site agent as a process in its own namespace (proxy DHCP, TFTP, the ramdisk's
// files), relays of the host's control plane and Temporal ports into that namespace and onto
// its bridge address (where machines dial them), and a Redfish BMC host on the host's
// loopback with QEMU machines behind it, each on a tap of the bridge. Needs root.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../services/config';
import { IronflowError } from '../../core/errors';
import { AgentLog } from '../common/log';
import { requireDnsmasq, startAddressOnlyDhcp } from './address-only-dhcp';
import { randomMac } from './fleet';
import { QemuBmcBackend } from './qemu-bmc';
import { QEMU_BINARY, type QemuFirmware } from './qemu-machine';
import { createNamespaceNetwork, type LoopbackForward, type NamespaceNetwork } from './qemu-network';
import { RedfishBmcHost } from './redfish-bmc';

/** Distinct from the tests' 10.77.<N>.0/24 networks. */
const QEMU_SITE_SUBNET = '10.78.0';
const AGENT_HOST_NUMBER = 2;
/** The site agent's address on the bridge: where machines reach the API and the agent gateway (IRONFLOW_API_URL, IRONFLOW_AGENT_GATEWAY_ADDRESS). */
export const QEMU_SITE_AGENT_IP = `${QEMU_SITE_SUBNET}.${AGENT_HOST_NUMBER}`;
export const BOOT_HTTP_PORT = 8081;
const ACTIVE_LOG = 'holding the boot lease: active boot server';

const ramdiskDir = (): string => path.resolve(process.env.IRONFLOW_DATA_DIR ?? path.join(repoRoot, '.ironflow'), 'ramdisk');

interface QemuSiteOptions {
  /** Where the network's leases, the agent's derived config and log, and the machines' files go. */
  dir: string;
  /** The site agent's control plane (its URL's port is relayed into its namespace at the same number). */
  controlPlaneUrl: string;
  /**
   * The API's CA (PEM): the agent's control_plane_ca_file, pinned for ramdisks (if.tls).
   * Machines reach the API off loopback, so it must be https (api.tls, a certificate naming
   * QEMU_SITE_AGENT_IP): agents refuse plain http there (services/control-plane-url.ts).
   */
  controlPlaneCaPems?: string[];
  /** The site agent's data dir (its identity, or where it joins with IRONFLOW_JOIN_TOKEN). */
  agentDataDir: string;
  tokenFile?: string;
  /** The agent gateway's port (agents reach Temporal only through it). */
  gatewayPort: number;
  /** Extra ports of the host's loopback the agent reaches (an image server, say). */
  extraPorts?: number[];
  /** CA file the agent's image cache trusts. */
  cacheCaFile?: string;
  env?: Record<string, string>;
}

interface QemuSiteMachine {
  id: string;
  bmc: { address: string; username: string; password: string };
  mac: string;
  productUuid: string;
  disk: string;
  /** Each power-on's serial console goes to its own file: <dir>/<id>.boot<N>.serial.log. */
  serialLogs: string;
}

export interface QemuSite {
  /** The agent's address on the bridge: where machines reach the API and Temporal (at the host's port numbers). */
  machineFacingHost: string;
  agentLogFile: string;
  bmc: RedfishBmcHost;
  addMachine(options: { firmware: QemuFirmware; diskBytes: number; memoryMb?: number }): QemuSiteMachine;
  close(): Promise<void>;
}

/** Fails with what to run when something the site needs is missing. */
export function requireQemuSite(firmware: QemuFirmware): void {
  if (process.getuid?.() !== 0) throw new IronflowError('INVALID_INPUT', 'needs root to make network namespaces; run as root or drop --qemu');
  requireDnsmasq();
  try {
    execFileSync(QEMU_BINARY, ['--version'], { stdio: 'ignore' });
  } catch {
    throw new IronflowError(
      'INVALID_INPUT',
      `${QEMU_BINARY} is missing: apt-get install -y qemu-system-x86 ipxe-qemu${firmware === 'uefi' ? ' ovmf ipxe' : ''}`,
    );
  }
  if (!existsSync(path.join(ramdiskDir(), 'initrd.img')))
    throw new IronflowError('INVALID_INPUT', `no ramdisk in ${ramdiskDir()}: run npm run build:ramdisk first`);
}

/**
 * The `[boot]` section of a site agent serving a namespace network from its host there: proxy
 * DHCP and TFTP on its address, the ramdisk from `filesDir`, a serial console on the kernel
 * command line. Shared by dev emulate --qemu, the demo and the QEMU tests.
 */
export function namespacedBootSection(
  host: { ip: string; interface: string },
  options: { filesDir: string; gatewayUrl?: string; cacheCaFile?: string },
): string[] {
  return [
    '[boot]',
    `http_address = "${host.ip}"`,
    `http_port = ${BOOT_HTTP_PORT}`,
    'proxy_dhcp = true',
    'tftp = true',
    `interface = "${host.interface}"`,
    `server_ip = "${host.ip}"`,
    `files_dir = ${JSON.stringify(options.filesDir)}`,
    'cmdline = "console=ttyS0"',
    ...(options.gatewayUrl ? [`gateway_url = ${JSON.stringify(options.gatewayUrl)}`] : []),
    ...(options.cacheCaFile ? [`cache_ca_file = ${JSON.stringify(options.cacheCaFile)}`] : []),
  ];
}

/** The site agent's config for its namespace: the caller's identity and control plane, the namespace's boot server. */
function namespacedAgentConfig(options: QemuSiteOptions, ip: string, iface: string, caFile: string | undefined): string {
  return [
    `control_plane_url = ${JSON.stringify(options.controlPlaneUrl)}`,
    ...(caFile ? [`control_plane_ca_file = ${JSON.stringify(caFile)}`] : []),
    `data_dir = ${JSON.stringify(options.agentDataDir)}`,
    ...(options.tokenFile ? [`token_file = ${JSON.stringify(options.tokenFile)}`] : []),
    '',
    ...namespacedBootSection(
      { ip, interface: iface },
      {
        filesDir: ramdiskDir(),
        gatewayUrl: `${new URL(options.controlPlaneUrl).protocol}//${ip}:${new URL(options.controlPlaneUrl).port}`,
        ...(options.cacheCaFile ? { cacheCaFile: options.cacheCaFile } : {}),
      },
    ),
    '',
  ].join('\n');
}

/** Resolves once the agent logs that it is the active boot server; rejects if it exits first. */
function agentActive(child: ChildProcess, logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      pending = (pending + chunk.toString()).slice(-4096);
      if (pending.includes(ACTIVE_LOG)) resolve();
    });
    child.once('exit', (code) =>
      reject(new IronflowError('INTERNAL', `the site agent exited (${code}) before it became the active boot server; its log: ${logFile}`)),
    );
  });
}

export async function startQemuSite(options: QemuSiteOptions): Promise<QemuSite> {
  // Machines join at the agent's bridge address, off loopback: https only, said before anything starts.
  if (new URL(options.controlPlaneUrl).protocol !== 'https:') {
    throw new IronflowError(
      'INVALID_CONFIG',
      `QEMU machines reach the control plane at ${QEMU_SITE_AGENT_IP}, off loopback, where agents refuse plain http: start it with api.tls (IRONFLOW_API_TLS_CERT, IRONFLOW_API_TLS_KEY: a certificate naming ${QEMU_SITE_AGENT_IP} and 127.0.0.1, with its CA in the file) and give the site agent https:// and control_plane_ca_file`,
      { path: 'control_plane_url' },
    );
  }
  // Fresh machines each run: no disk, serial log or lease of a previous run's machine of the same id.
  rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const network: NamespaceNetwork = createNamespaceNetwork('emu', QEMU_SITE_SUBNET);
  const relays: LoopbackForward[] = [];
  let bmc: RedfishBmcHost | undefined;
  let backend: QemuBmcBackend | undefined;
  let agent: ChildProcess | undefined;
  const close = async () => {
    if (agent && agent.exitCode === null && agent.signalCode === null) {
      const exited = new Promise((resolve) => agent?.once('exit', resolve));
      agent.kill('SIGTERM');
      await exited;
    }
    await backend?.close();
    await bmc?.close();
    for (const relay of relays) await relay.stop();
    await network.destroy();
  };
  try {
    const agentHost = network.addHost('agent', AGENT_HOST_NUMBER);
    startAddressOnlyDhcp(network, network.addHost('dhcp', AGENT_HOST_NUMBER + 1), options.dir);
    bmc = await RedfishBmcHost.start({ host: '127.0.0.1' });
    const log = new AgentLog((line) => process.stderr.write(`${line}\n`));
    backend = new QemuBmcBackend(bmc, log);
    const apiPort = Number(new URL(options.controlPlaneUrl).port);
    relays.push(await network.forwardLoopback(agentHost.ns, [apiPort, options.gatewayPort, Number(new URL(bmc.url).port), ...(options.extraPorts ?? [])]));
    relays.push(await network.forwardToBridge(agentHost, [apiPort, options.gatewayPort]));
    const configFile = path.join(options.dir, 'site-agent.toml');
    const caFile = options.controlPlaneCaPems?.length ? path.join(options.dir, 'control-plane-ca.pem') : undefined;
    if (caFile) writeFileSync(caFile, options.controlPlaneCaPems?.join('\n') ?? '', { mode: 0o600 });
    writeFileSync(configFile, namespacedAgentConfig(options, agentHost.ip, agentHost.interface, caFile), { mode: 0o600 });
    const agentLogFile = path.join(options.dir, 'site-agent.log');
    const agentLog = createWriteStream(agentLogFile, { mode: 0o600 });
    agent = network.spawnIn(agentHost.ns, process.execPath, [path.join(repoRoot, 'bin', 'ironflow.mjs'), 'agent', 'site', '--config', configFile], {
      cwd: repoRoot,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    agent.stderr?.pipe(agentLog);
    agent.stdout?.pipe(agentLog);
    await agentActive(agent, agentLogFile);
    const host = bmc;
    const qemu = backend;
    let sequence = 0;
    return {
      machineFacingHost: agentHost.ip,
      agentLogFile,
      bmc: host,
      addMachine({ firmware, diskBytes, memoryMb }) {
        sequence += 1;
        const id = `q${String(sequence).padStart(3, '0')}`;
        const mac = randomMac();
        const uuid = randomUUID();
        const disk = path.join(options.dir, `${id}.disk`);
        const { bmc: credentials } = qemu.add({
          id,
          firmware,
          uuid,
          mac,
          ...network.tapNic(),
          dir: options.dir,
          diskPath: disk,
          diskBytes,
          // The ramdisk (Node, the agent) and its image streaming want more than QEMU's 512 MiB default.
          memoryMb: memoryMb ?? 1024,
        });
        return { id, bmc: credentials, mac, productUuid: uuid, disk, serialLogs: path.join(options.dir, `${id}.boot<N>.serial.log`) };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
