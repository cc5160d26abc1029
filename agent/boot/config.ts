// The site agent's `[boot]` section: where the boot server listens and what it boots.
//
//   [boot]
//   http_address = "0.0.0.0"      # the iPXE scripts' HTTP server
//   http_port = 8081              # 0 picks a free port (tests)
//   public_url = "http://10.0.0.2:8081"   # how machines reach it (default: the address they used)
//   kernel = "http://10.0.0.2:8081/boot/files/vmlinuz"
//   initrd = "http://10.0.0.2:8081/boot/files/initrd.img"
//   cmdline = "console=ttyS0"     # appended after the if.* parameters
//   gateway_url = "https://ironflow.example.com"   # what ramdisks join (default: control_plane_url)
//   proxy_dhcp = false            # proxy DHCP and TFTP: not served by this build (see docs)
import { z } from 'zod';
import { parseWith } from '../../core/errors';

const httpUrl = z.url({ protocol: /^https?$/, error: 'an http(s) URL' });

export const bootConfigSchema = z
  .object({
    http_address: z.string().min(1).max(64).default('0.0.0.0'),
    http_port: z.number().int().min(0).max(65_535).default(8081),
    public_url: httpUrl.optional(),
    kernel: z.string().min(1).max(512).default('/boot/files/vmlinuz'),
    initrd: z.string().min(1).max(512).default('/boot/files/initrd.img'),
    cmdline: z.string().max(1024).regex(/^[^\n\r]*$/, 'one line').default(''),
    gateway_url: httpUrl.optional(),
    proxy_dhcp: z.boolean().default(false),
    tftp: z.boolean().default(false),
  })
  .strict();

export interface BootServerConfig {
  httpAddress: string;
  httpPort: number;
  publicUrl?: string;
  kernel: string;
  initrd: string;
  cmdline: string;
  /** The control plane URL a ramdisk joins: the gateway_url, else the agent's control_plane_url. */
  gatewayUrl: string;
  proxyDhcp: boolean;
}

export function bootServerConfigFrom(section: Record<string, unknown>, controlPlaneUrl: string): BootServerConfig {
  const parsed = parseWith(bootConfigSchema, section, 'INVALID_CONFIG');
  return {
    httpAddress: parsed.http_address,
    httpPort: parsed.http_port,
    ...(parsed.public_url ? { publicUrl: parsed.public_url.replace(/\/+$/, '') } : {}),
    kernel: parsed.kernel,
    initrd: parsed.initrd,
    cmdline: parsed.cmdline,
    gatewayUrl: (parsed.gateway_url ?? controlPlaneUrl).replace(/\/+$/, ''),
    proxyDhcp: parsed.proxy_dhcp || parsed.tftp,
  };
}
