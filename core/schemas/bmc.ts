// How a machine's BMC is reached: the part of a machine's record the site agent's BMC
// drivers take (credentials never travel with it: they are fetched per step by reference).
import { z } from 'zod';

export const bmcDriverNames = ['redfish', 'ipmi'] as const;
export const bootDevices = ['pxe', 'disk', 'cd'] as const;
export const powerActions = ['on', 'off', 'cycle', 'reset'] as const;

const pemCertificate = z
  .string()
  .max(64 * 1024)
  .regex(/-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/, 'a PEM certificate (-----BEGIN CERTIFICATE-----)');

export const redfishTargetSchema = z.object({
  driver: z.literal('redfish'),
  /** https://host[:port] or http://host[:port]; no path, no credentials. */
  address: z
    // abort: the refinement below reads the value as a URL, so it must not run on one that is not.
    .url({ protocol: /^https?$/, error: 'an http(s) URL such as https://10.0.0.5', abort: true })
    .refine((value) => {
      const url = new URL(value);
      return url.username === '' && url.password === '' && (url.pathname === '/' || url.pathname === '') && url.search === '';
    }, 'the BMC address is scheme://host[:port] only: no path, query or credentials'),
  /** The ComputerSystem id; the first member of /redfish/v1/Systems when absent. */
  systemId: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[^/?#]+$/, 'a Redfish resource id (no /, ? or #)')
    .optional(),
  /** Pinned CA (PEM) for an https BMC; the system CA store when absent. */
  caPem: pemCertificate.optional(),
  auth: z.enum(['basic', 'session']).default('basic'),
});

export const ipmiTargetSchema = z.object({
  driver: z.literal('ipmi'),
  /** host or host:port of the BMC's LAN channel (UDP 623 by default). */
  address: z
    .string()
    .min(1)
    .max(255)
    .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/, 'host or host:port, e.g. 10.0.0.5 or 10.0.0.5:623')
    .refine((value) => {
      const port = /:(\d{1,5})$/.exec(value)?.[1];
      return port === undefined || (Number(port) >= 1 && Number(port) <= 65_535);
    }, 'the port is 1 to 65535'),
  /** RMCP+ cipher suite; 3 (AES-128, HMAC-SHA1) is what nearly every BMC accepts. */
  cipherSuite: z.number().int().min(0).max(17).default(3),
});

export const bmcTargetSchema = z.discriminatedUnion('driver', [redfishTargetSchema, ipmiTargetSchema]);
export type BmcTarget = z.output<typeof bmcTargetSchema>;
export type BmcTargetInput = z.input<typeof bmcTargetSchema>;
export type RedfishTarget = z.output<typeof redfishTargetSchema>;
export type IpmiTarget = z.output<typeof ipmiTargetSchema>;
