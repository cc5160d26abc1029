// Proxy DHCP's sockets: UDP dhcp_port (67) for DISCOVERs and pxe_port (4011) for the PXE
// boot-server REQUESTs iPXE and OVMF send after their address is settled. Decisions are
// handler.ts's; this file reads, bounds, answers and addresses:
//   - port 67, relayed (giaddr set): to the relay, giaddr:67;
//   - port 67, client with an address (ciaddr): unicast to ciaddr:68;
//   - port 67, client without one: broadcast 255.255.255.255:68, sent from a socket bound to
//     server_ip so that it leaves on the provisioning network, not the default route;
//   - port 4011: back to the source address and port.
// Broadcasts reach only a socket bound to the wildcard address, so port 67 has two sockets
// (wildcard to hear, server_ip to speak and to hear unicasts), sharing the port by SO_REUSEADDR.
// That flag would also let another process's SO_REUSEADDR socket (a second agent, a dnsmasq)
// share the port unnoticed, so a plain bind first proves nobody else holds it.
import dgram from 'node:dgram';
import { IronflowError } from '../../../core/errors';
import type { BootEntryStore } from '../entries';
import type { BootServerConfig } from '../config';
import type { DiscoveredPxeClients } from '../discovered';
import type { BootServerState } from '../http/ipxe-routes';
import type { AgentLog } from '../../common/log';
import type { BootServerMetrics } from '../metrics';
import { throttledLog } from '../throttled-log';
import { decideProxyDhcp, MAX_BOOT_FILE_BYTES, type ProxyDhcpPort } from './handler';
import { decodeDhcpPacket, encodeDhcpReply, MAX_PACKET_BYTES } from './packet';
import { udpBindError } from '../bind-error';

const CLIENT_PORT = 68;
const LIMITED_BROADCAST = '255.255.255.255';
const NO_ADDRESS = '0.0.0.0';

export interface ProxyDhcpServer {
  close(): Promise<void>;
}

interface ProxyDhcpOptions {
  config: BootServerConfig;
  entries: BootEntryStore;
  state: () => BootServerState;
  discovered: DiscoveredPxeClients;
  /** The boot server's HTTP base URL machines reach (chain.ipxe, HTTP boot files). */
  httpBaseUrl: string;
  log: AgentLog;
  metrics?: BootServerMetrics;
}

function bindSocket(port: number, address: string, reuseAddr: boolean): Promise<dgram.Socket> {
  const socket = dgram.createSocket({ type: 'udp4', reuseAddr });
  return new Promise((resolve, reject) => {
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.close();
      reject(udpBindError(error, { service: 'proxy DHCP', port, address, configKey: 'proxy_dhcp' }));
    });
    socket.bind(port, address, () => {
      socket.removeAllListeners('error');
      socket.setBroadcast(true);
      resolve(socket);
    });
  });
}

export async function startProxyDhcpServer(options: ProxyDhcpOptions): Promise<ProxyDhcpServer> {
  const { config, log, discovered, metrics } = options;
  const serverIp = config.serverIp;
  if (!serverIp) throw new IronflowError('INVALID_CONFIG', 'boot.server_ip is required with proxy_dhcp', { path: 'boot.server_ip' });
  // A public_url too long for option 67 would leave iPXE unanswered, silently: refuse it here.
  const longestUrl =
    [`${options.httpBaseUrl}/boot/chain.ipxe`, ...Object.values(config.bootFiles).map((file) => `${options.httpBaseUrl}/boot/files/${file}`)].sort(
      (a, b) => b.length - a.length,
    )[0] ?? '';
  if (Buffer.byteLength(longestUrl) > MAX_BOOT_FILE_BYTES) {
    throw new IronflowError(
      'INVALID_CONFIG',
      `proxy DHCP boot URLs such as ${longestUrl.slice(0, 80)}… exceed the ${MAX_BOOT_FILE_BYTES} bytes of DHCP option 67; shorten boot.public_url`,
      { path: 'boot.public_url' },
    );
  }
  const logAnswer = throttledLog(log, 'info', 'proxy DHCP answered');
  const logDiscovered = throttledLog(log, 'info', 'proxy DHCP: a PXE client without a boot entry (listed as discovered)');
  const context = () => ({
    entries: options.entries,
    state: options.state(),
    config: { serverIp, bootFiles: config.bootFiles },
    httpBaseUrl: options.httpBaseUrl,
  });

  const sockets: dgram.Socket[] = [];
  const closeAll = () => Promise.all(sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  let speaker: dgram.Socket;
  try {
    const probe = await bindSocket(config.ports.dhcp, NO_ADDRESS, false);
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    sockets.push(await bindSocket(config.ports.dhcp, NO_ADDRESS, true));
    speaker = await bindSocket(config.ports.dhcp, serverIp, true);
    sockets.push(speaker);
    sockets.push(await bindSocket(config.ports.pxe, NO_ADDRESS, false));
  } catch (error) {
    await closeAll();
    throw error;
  }
  const [dhcpAny, , pxe] = sockets as [dgram.Socket, dgram.Socket, dgram.Socket];

  const answer = (port: ProxyDhcpPort, message: Buffer, source: dgram.RemoteInfo) => {
    if (message.length > MAX_PACKET_BYTES) return metrics?.dhcpPacket(port, 'oversized');
    const packet = decodeDhcpPacket(message);
    if (!packet) return metrics?.dhcpPacket(port, 'undecodable');
    const decision = decideProxyDhcp(packet, port, context());
    metrics?.dhcpPacket(port, 'ignored' in decision ? decision.ignored : 'answered');
    if ('ignored' in decision) {
      if (decision.discovered && discovered.record(decision.discovered)) logDiscovered({ mac: decision.discovered.mac, arch: decision.discovered.arch });
      return;
    }
    discovered.forget(decision.mac);
    const reply = encodeDhcpReply(decision.answer);
    const [address, toPort, socket] =
      port === 'pxe'
        ? [source.address, source.port, pxe]
        : packet.giaddr !== NO_ADDRESS
          ? [packet.giaddr, config.ports.dhcp, speaker]
          : packet.ciaddr !== NO_ADDRESS
            ? [packet.ciaddr, CLIENT_PORT, speaker]
            : [LIMITED_BROADCAST, CLIENT_PORT, speaker];
    socket.send(reply, toPort, address, (error) => {
      if (error) log.warn('proxy DHCP could not send an answer', { mac: decision.mac, to: address, error: error.message });
    });
    logAnswer({ mac: decision.mac, port: port === 'pxe' ? config.ports.pxe : config.ports.dhcp, bootFile: decision.bootFile });
  };
  // A packet never takes the agent down: a failure (the entry store's disk, say) drops it.
  const logFailure = throttledLog(log, 'warn', 'proxy DHCP dropped a packet it failed to handle');
  const receive = (port: ProxyDhcpPort) => (message: Buffer, source: dgram.RemoteInfo) => {
    try {
      answer(port, message, source);
    } catch (error) {
      metrics?.dhcpPacket(port, 'failed');
      logFailure({ error: (error as Error).message });
    }
  };
  dhcpAny.on('message', receive('dhcp'));
  speaker.on('message', receive('dhcp'));
  pxe.on('message', receive('pxe'));
  for (const socket of sockets) socket.on('error', (error) => log.warn('proxy DHCP socket error', { error: error.message }));
  log.info('proxy DHCP listening', { serverIp, interface: config.interface ?? null, dhcpPort: config.ports.dhcp, pxePort: config.ports.pxe });
  return {
    close: async () => {
      await closeAll();
    },
  };
}
