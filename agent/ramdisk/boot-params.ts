// The ramdisk's boot parameters: the `if.*` arguments of its kernel command line, as the
// site agent's iPXE script rendered them (agent/boot/ipxe/script.ts).
import { z } from 'zod';
import { caPinPattern } from '../../services/ca-pin';
import { requireTlsOffLoopback } from '../../services/control-plane-url';
import { IronflowError, parseWith } from '../../core/errors';
import { IPXE_PARAM_PREFIX } from '../boot/ipxe/script';

const bootParamsSchema = z
  .object({
    /** The control plane the ramdisk joins: https, or http on loopback only (services/control-plane-url.ts). */
    gateway: z.url({ protocol: /^https?$/ }),
    /** sha256 (hex) of the node CA: the ramdisk trusts only a control plane whose CA matches. */
    ca: z.string().regex(/^[0-9a-f]{64}$/),
    /** The key pin (sha256/…=) of the CA the gateway's TLS certificate chains to: the site agent's control_plane_ca_file. Absent: the system's CAs. */
    tls: z.string().regex(caPinPattern).optional(),
    mac: z.string().max(32),
    /** The discovery token (single use). */
    token: z.string().min(1).max(512),
    /** The site agent's signed discovery assertion. */
    assertion: z.string().min(1).max(4096),
    /** The site agent's image cache under this boot's grant (…/cache/t/<grant>): deploy.image tries it first. */
    cache: z
      .url({ protocol: /^https?$/ })
      .max(256)
      .optional(),
    /** The site agent's pinned quorum policies (sha256 hex, comma-separated): disk.wipe and deploy.image run only in a batch approved under one. */
    quorum: z
      .string()
      .regex(/^[0-9a-f]{64}(,[0-9a-f]{64}){0,3}$/)
      .optional(),
  })
  .strip();
export type BootParams = z.infer<typeof bootParamsSchema>;

/** From a kernel command line (`/proc/cmdline`) or the arguments of an iPXE kernel line. */
export function bootParamsFrom(cmdline: string | string[]): BootParams {
  const args = Array.isArray(cmdline) ? cmdline : cmdline.trim().split(/\s+/);
  const params: Record<string, string> = {};
  for (const arg of args) {
    if (!arg.startsWith(IPXE_PARAM_PREFIX)) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) params[arg.slice(IPXE_PARAM_PREFIX.length, eq)] = arg.slice(eq + 1);
  }
  let parsed: BootParams;
  try {
    parsed = parseWith(bootParamsSchema, params, 'INVALID_CONFIG');
  } catch (error) {
    if (error instanceof IronflowError)
      throw new IronflowError(
        'INVALID_CONFIG',
        `the kernel command line lacks the ramdisk's boot parameters (if.gateway, if.ca, if.mac, if.token, if.assertion): ${error.message}`,
        error.details,
      );
    throw error;
  }
  requireTlsOffLoopback(
    parsed.gateway,
    'if.gateway',
    "the site agent's boot.gateway_url or control_plane_url, with control_plane_ca_file so the boot script pins it as if.tls",
  );
  return parsed;
}
