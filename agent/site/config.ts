// The site agent's config file (TOML), checked with zod. Relative paths resolve against
// the file's directory, so a config moved with its data dir keeps working.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { z } from 'zod';
import { readCaFile } from '../../services/ca-file';
import { requireTlsOffLoopback } from '../../services/control-plane-url';
import { durationMs, durationPattern } from '../../core/duration';
import { listenAddressSchema } from '../../core/schemas/common';
import { IronflowError, parseWith } from '../../core/errors';
import { parseCidr, type Cidr } from './networks';

const cidrSchema = z.string().refine((value) => parseCidr(value) !== undefined, 'a CIDR such as 10.10.0.0/16 or fd00::/64');
const durationSchema = z.string().regex(durationPattern, 'a duration such as 30s, 15m or 8h');

const siteAgentConfigSchema = z
  .object({
    /** The control plane's API, e.g. https://ironflow.example.com. */
    control_plane_url: z.url({ protocol: /^https?$/, error: 'an http(s) URL such as https://ironflow.example.com' }),
    /** CA certificates (PEM) the API's certificate must chain to (its api.tls); the system's when unset. Its first is what ramdisks pin (if.tls). */
    control_plane_ca_file: z.string().min(1).max(4096).optional(),
    /** Where the key, certificate, boot entries and BMC operation ledger live (created 0700). */
    data_dir: z.string().min(1),
    /** A file holding the site token; IRONFLOW_JOIN_TOKEN wins when set. */
    token_file: z.string().min(1).optional(),
    site: z
      .object({
        /** The BMC networks: site.httpProxy never reaches into them. */
        bmc_networks: z.array(cidrSchema).max(256).default([]),
      })
      .strict()
      .default({ bmc_networks: [] }),
    /** The boot server's settings (proxy DHCP, TFTP, HTTP); kept for it, read by it. */
    boot: z.record(z.string(), z.unknown()).optional(),
    /** The destructive-batch quorum (docs/quorum.md): sha256 of each tenant quorum policy this site enforces. */
    quorum: z
      .object({
        pinned_policies: z
          .array(z.string().regex(/^[0-9a-f]{64}$/, 'a policy sha256 (hex), as `ironflow batches policy` shows it'))
          .max(4)
          .default([]),
      })
      .strict()
      .default({ pinned_policies: [] }),
    /** Prometheus' scrape of the boot server's counts (docs/metrics.md); none when unset. */
    metrics: z
      .object({
        /** Where GET /metrics listens, e.g. 127.0.0.1:9466 (the counts are not secret, but keep it off the provisioning network). */
        address: listenAddressSchema,
        /**
         * Where the Temporal SDK's exporter of the agent's worker metrics listens (task slots,
         * polls, activity latencies), on loopback: GET /metrics serves its text after the
         * boot server's counts. None when unset.
         */
        temporal_sdk_address: listenAddressSchema.optional(),
      })
      .strict()
      .optional(),
    certificate: z
      .object({
        /**
         * Renew this long after a certificate was issued, when that is before the control
         * plane's renewAfter (a third of the lifetime before expiry). For tests and drills.
         */
        renew_after: durationSchema.optional(),
      })
      .strict()
      .default({}),
  })
  .strict();

export interface SiteAgentConfig {
  controlPlaneUrl: string;
  /** control_plane_ca_file's certificates: the only CAs the agent trusts for the API. */
  controlPlaneCaPems?: string[];
  dataDir: string;
  tokenFile?: string;
  bmcNetworks: Cidr[];
  boot?: Record<string, unknown>;
  /** Renew at most this long after issuance (the control plane's renewAfter otherwise). */
  renewAfterMs?: number;
  /** [quorum] pinned_policies: destructive commands run only in batches approved under one of these. */
  quorumPins: string[];
  /** [metrics] address: host:port of the agent's GET /metrics. */
  metricsAddress?: string;
  /** [metrics] temporal_sdk_address: host:port of the Temporal SDK's exporter, which GET /metrics reads. */
  temporalSdkMetricsAddress?: string;
}

/** Checks a parsed document; `baseDir` resolves relative paths. */
export function siteAgentConfigFrom(document: unknown, baseDir: string): SiteAgentConfig {
  const parsed = parseWith(siteAgentConfigSchema, document, 'INVALID_CONFIG');
  const renewAfter = parsed.certificate.renew_after;
  const pinHint = 'control_plane_ca_file = "<the API\'s CA, PEM>"';
  requireTlsOffLoopback(parsed.control_plane_url, 'control_plane_url', pinHint);
  if (parsed.control_plane_ca_file && !parsed.control_plane_url.startsWith('https:')) {
    throw new IronflowError(
      'INVALID_CONFIG',
      "control_plane_ca_file is set but control_plane_url is not https: give the API's https:// URL, or drop the CA file",
      { path: 'control_plane_ca_file' },
    );
  }
  // What ramdisks will join, refused now rather than when the boot server starts after the join.
  if (typeof parsed.boot?.gateway_url === 'string') requireTlsOffLoopback(parsed.boot.gateway_url, 'boot.gateway_url', `${pinHint}; ramdisks pin it as if.tls`);
  return {
    controlPlaneUrl: parsed.control_plane_url.replace(/\/+$/, ''),
    ...(parsed.control_plane_ca_file ? { controlPlaneCaPems: [readCaFile(path.resolve(baseDir, parsed.control_plane_ca_file), 'control_plane_ca_file')] } : {}),
    dataDir: path.resolve(baseDir, parsed.data_dir),
    ...(parsed.token_file ? { tokenFile: path.resolve(baseDir, parsed.token_file) } : {}),
    bmcNetworks: parsed.site.bmc_networks.map((c) => parseCidr(c) as Cidr),
    quorumPins: parsed.quorum.pinned_policies,
    ...(parsed.boot ? { boot: parsed.boot } : {}),
    ...(renewAfter ? { renewAfterMs: durationMs(renewAfter) } : {}),
    ...(parsed.metrics ? { metricsAddress: parsed.metrics.address } : {}),
    ...(parsed.metrics?.temporal_sdk_address ? { temporalSdkMetricsAddress: parsed.metrics.temporal_sdk_address } : {}),
  };
}

export function loadSiteAgentConfig(file: string): SiteAgentConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new IronflowError('INVALID_CONFIG', `cannot read the site agent config ${file}: ${(error as Error).message}`, { path: file });
  }
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new IronflowError('INVALID_CONFIG', `${file} is not valid TOML: ${(error as Error).message}`, { path: file });
  }
  try {
    return siteAgentConfigFrom(document, path.dirname(path.resolve(file)));
  } catch (error) {
    if (error instanceof IronflowError) throw new IronflowError('INVALID_CONFIG', `${file}: ${error.message}`, error.details);
    throw error;
  }
}
