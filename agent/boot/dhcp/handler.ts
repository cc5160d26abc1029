// Proxy DHCP's decision for one packet (spec 001, "The boot server", stage 1): which
// iPXE build or URL a PXE or HTTP-boot client gets, or no answer at all. Pure: the socket
// side (server.ts) sends the reply and records the sighting. The answer never offers an
// address (yiaddr 0): the site's own DHCP server does that, we only name the boot file.
import type { BootArchitecture, BootEntry } from '../../../core/boot/boot-entry';
import type { BootFiles } from '../config';
import type { BootServerState } from '../http/ipxe-routes';
import type { PxeSighting } from '../discovered';
import { DhcpMessageType, DhcpOption, architectureName, platformOf, pxeVendorOptions } from './options';
import { messageTypeOf, type DhcpPacket, type DhcpReply } from './packet';

/** Which socket the packet came in on: the DHCP port (67) or the PXE boot server port (4011). */
export type ProxyDhcpPort = 'dhcp' | 'pxe';

export interface ProxyDhcpContext {
  entries: { get(mac: string): BootEntry | undefined };
  state: BootServerState;
  config: { serverIp: string; bootFiles: BootFiles };
  /** The boot server's HTTP base URL (chain.ipxe, HTTP boot files), without a trailing slash. */
  httpBaseUrl: string;
}

export type ProxyDhcpIgnoreReason = 'not-a-boot-request' | 'not-pxe' | 'malformed' | 'unknown-mac' | 'not-active' | 'unsupported-arch' | 'boot-file-too-long';

export type ProxyDhcpDecision = { answer: DhcpReply; mac: string; bootFile: string } | { ignored: ProxyDhcpIgnoreReason; discovered?: PxeSighting };

type ClientFamily = 'PXEClient' | 'HTTPClient';

const NO_ADDRESS = '0.0.0.0';
const BROADCAST_FLAG = 0x8000;
const UUID_OPTION_BYTES = 17;
/** The longest boot file name `file` holds with its terminating NUL. */
const FILE_FIELD_MAX = 127;
/** The longest boot file name or URL option 67 holds. */
export const MAX_BOOT_FILE_BYTES = 255;
const ipxeUserClass = 'iPXE';

function familyOf(vendorClass: Buffer | undefined): ClientFamily | undefined {
  const text = vendorClass?.toString('latin1');
  if (text?.startsWith('PXEClient')) return 'PXEClient';
  if (text?.startsWith('HTTPClient')) return 'HTTPClient';
  return undefined;
}

/**
 * Option 93's first architecture type; failing it the one in option 60 (`PXEClient:Arch:00007:…`);
 * null when neither says; undefined when option 93 is malformed.
 */
function architectureTypeOf(packet: DhcpPacket): number | null | undefined {
  const option = packet.options.get(DhcpOption.clientArchitecture);
  if (option) return option.length >= 2 && option.length % 2 === 0 ? option.readUInt16BE(0) : undefined;
  const match = /^(?:PXE|HTTP)Client:Arch:(\d{5})/.exec(packet.options.get(DhcpOption.vendorClass)?.toString('latin1') ?? '');
  return match ? Number(match[1]) : null;
}

/** iPXE sends user class `iPXE` bare; RFC 3004 clients send length-prefixed items. */
function isIpxe(packet: DhcpPacket): boolean {
  const option = packet.options.get(DhcpOption.userClass);
  if (!option) return false;
  if (option.toString('latin1') === ipxeUserClass) return true;
  for (let at = 0; at < option.length;) {
    const length = option[at] as number;
    if (option.toString('latin1', at + 1, at + 1 + length) === ipxeUserClass) return true;
    at += 1 + length;
  }
  return false;
}

/** Option 97 as the canonical UUID, when it is one (type 0 and 16 bytes). */
function uuidOf(machineId: Buffer | undefined): string | null {
  if (machineId?.length !== UUID_OPTION_BYTES || machineId[0] !== 0) return null;
  const hex = machineId.toString('hex', 1);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function buildFor(platform: BootArchitecture, files: BootFiles): string {
  if (platform === 'BIOS') return files.bios;
  return platform === 'ARM64_EFI' ? files.arm64Efi : files.x86_64Efi;
}

export function decideProxyDhcp(packet: DhcpPacket, port: ProxyDhcpPort, context: ProxyDhcpContext): ProxyDhcpDecision {
  const expected = port === 'dhcp' ? DhcpMessageType.discover : DhcpMessageType.request;
  if (packet.op !== 1 || messageTypeOf(packet) !== expected) return { ignored: 'not-a-boot-request' };
  const family = familyOf(packet.options.get(DhcpOption.vendorClass));
  if (!family) return { ignored: 'not-pxe' };
  const architectureType = architectureTypeOf(packet);
  if (architectureType === undefined) return { ignored: 'malformed' };
  const machineId = packet.options.get(DhcpOption.clientMachineId);

  // A standby or fenced agent neither answers nor lists: discovery is the active boot server's (spec 001).
  if (!context.state.active || context.state.epoch <= 0) return { ignored: 'not-active' };
  const entry = context.entries.get(packet.mac);
  if (!entry) {
    return {
      ignored: 'unknown-mac',
      discovered: {
        mac: packet.mac,
        uuid: uuidOf(machineId),
        arch: architectureType === null ? 'unknown' : architectureName(architectureType),
        giaddr: packet.giaddr === NO_ADDRESS ? null : packet.giaddr,
      },
    };
  }

  // The firmware's own word wins over the entry's; a pre-RFC 4578 client says nothing.
  const platform = architectureType === null ? entry.arch : platformOf(architectureType);
  if (!platform || (family === 'HTTPClient' && platform === 'BIOS')) return { ignored: 'unsupported-arch' };
  const build = buildFor(platform, context.config.bootFiles);
  const ipxe = isIpxe(packet);
  const viaTftp = family === 'PXEClient' && !ipxe;
  const bootFile = ipxe ? `${context.httpBaseUrl}/boot/chain.ipxe` : viaTftp ? build : `${context.httpBaseUrl}/boot/files/${build}`;
  if (Buffer.byteLength(bootFile) > MAX_BOOT_FILE_BYTES) return { ignored: 'boot-file-too-long' };

  const { serverIp } = context.config;
  const options: DhcpReply['options'] = {
    [DhcpOption.messageType]: port === 'dhcp' ? DhcpMessageType.offer : DhcpMessageType.ack,
    [DhcpOption.serverIdentifier]: serverIp,
    [DhcpOption.vendorClass]: family,
    [DhcpOption.bootFileName]: bootFile,
  };
  if (family === 'PXEClient') options[DhcpOption.vendorSpecific] = [...pxeVendorOptions];
  if (viaTftp) options[DhcpOption.tftpServerName] = serverIp;
  if (machineId?.length === UUID_OPTION_BYTES) options[DhcpOption.clientMachineId] = [...machineId];
  return {
    mac: packet.mac,
    bootFile,
    answer: {
      xid: packet.xid,
      flags: packet.ciaddr === NO_ADDRESS ? packet.flags | BROADCAST_FLAG : packet.flags,
      ciaddr: packet.ciaddr,
      yiaddr: NO_ADDRESS,
      siaddr: serverIp,
      giaddr: packet.giaddr,
      mac: packet.mac,
      file: Buffer.byteLength(bootFile) <= FILE_FIELD_MAX ? bootFile : '',
      options,
    },
  };
}
