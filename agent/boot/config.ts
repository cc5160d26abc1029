// The site agent's `[boot]` section: where the boot server listens and what it boots.
//
//   [boot]
//   http_address = "0.0.0.0"      # the boot server's HTTP side (iPXE scripts, /boot/files, /cache)
//   http_port = 8081              # 0 picks a free port (tests)
//   public_url = "http://10.0.0.2:8081"   # how machines reach it (default: the address they used)
//   kernel = "/boot/files/vmlinuz"        # relative URLs resolve against the script's URL
//   initrd = "/boot/files/initrd.img"
//   cmdline = "console=ttyS0"     # appended after the if.* parameters
//   gateway_url = "https://ironflow.example.com"   # what ramdisks join (default: control_plane_url);
//                                 # https off loopback, its chain holding control_plane_ca_file's CA (pinned as if.tls)
//   files_dir = "boot-files"      # GET /boot/files/<name> (default: <data_dir>/boot-files)
//   proxy_dhcp = true             # UDP 67 and 4011: PXE/HTTP-boot answers, never an address
//   interface = "eth1"            # the provisioning network's interface (for messages and docs)
//   server_ip = "10.0.0.2"        # next-server and option 54: this agent's address there
//   tftp = true                   # read-only TFTP of the iPXE builds on UDP 69
//   tftp_root = "/usr/lib/ipxe"   # Debian's `ipxe` package
//   bios_boot_file = "undionly.kpxe"
//   efi_boot_file = "snponly.efi" # or ipxe.efi
//   arm64_efi_boot_file = "ipxe-arm64.efi"
//   cache_max_bytes = 107374182400   # the image cache's budget (LRU past it); unset: no limit
//   cache_ca_file = "mirror-ca.pem"  # CA certificates (PEM) the cache trusts for image sources beyond the system's
//   dhcp_port = 67, pxe_port = 4011, tftp_port = 69   # change only behind a relay or in tests
import path from 'node:path';
import { isIPv4 } from 'node:net';
import { z } from 'zod';
import { readCaFile } from '../../services/ca-file';
import { spkiPinOf } from '../../services/ca-pin';
import { requireTlsOffLoopback } from '../../services/control-plane-url';
import { IronflowError, parseWith } from '../../core/errors';

const httpUrl = z.url({ protocol: /^https?$/, error: 'an http(s) URL' });
const port = z.number().int().min(0).max(65_535);
const bootFileName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a file name in tftp_root, such as undionly.kpxe');

const bootConfigSchema = z
  .object({
    http_address: z.string().min(1).max(64).default('0.0.0.0'),
    http_port: port.default(8081),
    public_url: httpUrl.optional(),
    kernel: z.string().min(1).max(512).default('/boot/files/vmlinuz'),
    initrd: z.string().min(1).max(512).default('/boot/files/initrd.img'),
    cmdline: z
      .string()
      .max(1024)
      .regex(/^[^\n\r]*$/, 'one line')
      .default(''),
    gateway_url: httpUrl.optional(),
    files_dir: z.string().min(1).max(4096).optional(),
    proxy_dhcp: z.boolean().default(false),
    interface: z
      .string()
      .regex(/^[A-Za-z0-9._:@-]{1,15}$/, 'an interface name such as eth1')
      .optional(),
    server_ip: z
      .string()
      .refine((v) => isIPv4(v), 'an IPv4 address such as 10.0.0.2')
      .optional(),
    tftp: z.boolean().default(false),
    tftp_root: z.string().min(1).max(4096).default('/usr/lib/ipxe'),
    bios_boot_file: bootFileName.default('undionly.kpxe'),
    efi_boot_file: bootFileName.default('snponly.efi'),
    arm64_efi_boot_file: bootFileName.default('ipxe-arm64.efi'),
    cache_max_bytes: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    cache_ca_file: z.string().min(1).max(4096).optional(),
    dhcp_port: port.default(67),
    pxe_port: port.default(4011),
    tftp_port: port.default(69),
  })
  .strict();

/** The iPXE build each firmware gets (option 93's architecture → file in tftp_root). */
export interface BootFiles {
  bios: string;
  x86_64Efi: string;
  arm64Efi: string;
}

export interface BootServerConfig {
  httpAddress: string;
  httpPort: number;
  publicUrl?: string;
  kernel: string;
  initrd: string;
  cmdline: string;
  /** The control plane URL a ramdisk joins: the gateway_url, else the agent's control_plane_url. */
  gatewayUrl: string;
  /** The CA a ramdisk pins for an https gateway (if.tls): the key of control_plane_ca_file's first certificate. */
  gatewayCaPin?: string;
  /** GET /boot/files/<name> serves from here (kernel, initrd), then the iPXE builds in tftpRoot. */
  filesDir: string;
  /** Where the image cache keeps verified copies: <data_dir>/cache. */
  cacheDir: string;
  cacheMaxBytes?: number;
  /** PEM CA certificates the cache's pulls trust beyond the system's (an internal image mirror). */
  cacheCaPems?: string[];
  proxyDhcp: boolean;
  interface?: string;
  /** This agent's IPv4 address on the provisioning network (required with proxy_dhcp or tftp). */
  serverIp?: string;
  tftp: boolean;
  tftpRoot: string;
  bootFiles: BootFiles;
  ports: { dhcp: number; pxe: number; tftp: number };
}

/** The control plane as the site agent reaches it: its URL and the CAs it trusts there (control_plane_ca_file). */
interface ControlPlaneTarget {
  url: string;
  caPems?: string[];
}

export function bootServerConfigFrom(section: Record<string, unknown>, controlPlane: ControlPlaneTarget, dataDir: string, baseDir = dataDir): BootServerConfig {
  const parsed = parseWith(bootConfigSchema, section, 'INVALID_CONFIG');
  const gatewayUrl = (parsed.gateway_url ?? controlPlane.url).replace(/\/+$/, '');
  // Refused here, at the agent's start, not by every ramdisk it would boot.
  requireTlsOffLoopback(
    gatewayUrl,
    parsed.gateway_url ? 'boot.gateway_url' : 'control_plane_url',
    'control_plane_ca_file = "<the API\'s CA, PEM>" in the site agent\'s config; ramdisks pin it as if.tls',
  );
  const caPem = controlPlane.caPems?.[0];
  if ((parsed.proxy_dhcp || parsed.tftp) && !parsed.server_ip) {
    throw new IronflowError(
      'INVALID_CONFIG',
      'boot.server_ip is required with proxy_dhcp or tftp: it is the address machines reach this agent at (next-server)',
      { path: 'boot.server_ip' },
    );
  }
  return {
    httpAddress: parsed.http_address,
    httpPort: parsed.http_port,
    ...(parsed.public_url ? { publicUrl: parsed.public_url.replace(/\/+$/, '') } : {}),
    kernel: parsed.kernel,
    initrd: parsed.initrd,
    cmdline: parsed.cmdline,
    gatewayUrl,
    ...(caPem && gatewayUrl.startsWith('https:') ? { gatewayCaPin: spkiPinOf(caPem) } : {}),
    filesDir: parsed.files_dir ? path.resolve(baseDir, parsed.files_dir) : path.join(dataDir, 'boot-files'),
    cacheDir: path.join(dataDir, 'cache'),
    ...(parsed.cache_max_bytes !== undefined ? { cacheMaxBytes: parsed.cache_max_bytes } : {}),
    ...(parsed.cache_ca_file ? { cacheCaPems: [readCaFile(path.resolve(baseDir, parsed.cache_ca_file), 'boot.cache_ca_file')] } : {}),
    proxyDhcp: parsed.proxy_dhcp,
    ...(parsed.interface ? { interface: parsed.interface } : {}),
    ...(parsed.server_ip ? { serverIp: parsed.server_ip } : {}),
    tftp: parsed.tftp,
    tftpRoot: path.resolve(baseDir, parsed.tftp_root),
    bootFiles: { bios: parsed.bios_boot_file, x86_64Efi: parsed.efi_boot_file, arm64Efi: parsed.arm64_efi_boot_file },
    ports: { dhcp: parsed.dhcp_port, pxe: parsed.pxe_port, tftp: parsed.tftp_port },
  };
}
