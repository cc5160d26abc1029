// The command kinds a site agent accepts beyond the profile steps (spec 001, "The site
// agent": role-restricted to `site`). The control plane sends them itself; a profile names
// power.setPower or management.setBootDevice instead. Declared here so the site agent's step
// map is typed by the registry like every other worker's.
import { z } from 'zod';
import { pxeBootSchema } from '../boot/boot-entry';
import { macSchema } from '../schemas/common';
import { bootDevices, powerActions } from '../schemas/bmc';
import { defineStep } from './registry';

const none = z.object({}).strict();
const unsupported = z.never();

/** site.httpProxy's cap on a request body and on the answer it returns. */
export const HTTP_PROXY_MAX_ANSWER_BYTES = 1024 * 1024;

export const bootDeviceWithSchema = z.object({ device: z.enum([...bootDevices, 'bios']), persistent: z.boolean().default(false) }).strict();
export const powerWithSchema = z.object({ action: z.enum(powerActions) }).strict();
export const logsWithSchema = z.object({ limit: z.number().int().min(1).max(500).default(100) }).strict();
export const httpProxyWithSchema = z
  .object({
    url: z.string().min(1).max(2048),
    method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(4096)).default({}),
    body: z.string().max(HTTP_PROXY_MAX_ANSWER_BYTES).optional(),
    timeoutMs: z.number().int().min(100).max(60_000).default(10_000),
  })
  .strict();

const bootDeviceOutput = z.object({ device: z.enum(bootDevices), persistent: z.boolean(), sent: z.boolean() });
const powerOutput = z.object({ action: z.enum(powerActions), sent: z.boolean(), interrupted: z.boolean(), power: z.string().max(16).optional() });
/** What a power command answers (power.setPower, bmc.power, each of boot.pxeBoot's). */
export type PowerOutput = z.infer<typeof powerOutput>;

const command = { queues: [], commandOn: ['site'], defaultTimeout: '5m', defaultRetries: 0 } as const;

export const siteCommandKinds = [
  defineStep({
    ...command,
    use: 'bmc.query',
    summary: 'What the BMC says about the machine: power state, boot setting, SMBIOS UUID, PXE MACs, IPs (reads only)',
    with: none,
    output: z.object({ driver: z.string().max(32), power: z.string().max(16), boot: z.unknown(), inspection: z.unknown() }),
    retry: 'idempotent',
  }),
  defineStep({
    ...command,
    use: 'bmc.boot',
    summary: 'Sets the next (or every) boot device through the BMC, once per operation id',
    with: bootDeviceWithSchema,
    output: bootDeviceOutput,
    retry: 'idempotent',
  }),
  defineStep({
    ...command,
    use: 'bmc.power',
    summary: 'One power command through the BMC, once per operation id',
    with: powerWithSchema,
    output: powerOutput,
    retry: 'idempotent',
  }),
  defineStep({
    ...command,
    use: 'boot.pxeBoot',
    summary:
      'metal.ensureRamdisk’s network boot as one command: writes the boot entries (none for a discovery boot), then powers off, sets a one-time PXE boot and powers on, each BMC command once per operation id',
    with: pxeBootSchema,
    output: z.object({
      macs: z.array(macSchema).max(16),
      notAfter: z.string().max(64).nullable(),
      off: powerOutput,
      boot: bootDeviceOutput,
      on: powerOutput,
    }),
    retry: 'idempotent',
  }),
  defineStep({
    ...command,
    use: 'bmc.rotate',
    summary: 'Rotates the BMC credentials (not implemented by the drivers yet: UNSUPPORTED)',
    with: z.unknown(),
    output: unsupported,
    retry: 'once',
  }),
  defineStep({
    ...command,
    use: 'bmc.firmware',
    summary: 'Updates firmware through the BMC (not implemented by the drivers yet: UNSUPPORTED)',
    with: z.unknown(),
    output: unsupported,
    retry: 'once',
  }),
  defineStep({
    ...command,
    use: 'bmc.storage',
    summary: 'Configures storage (RAID volumes) through the BMC (not implemented by the drivers yet: UNSUPPORTED)',
    with: z.unknown(),
    output: unsupported,
    retry: 'once',
  }),
  defineStep({
    ...command,
    use: 'site.httpProxy',
    summary: 'One HTTP request to an agentless machine on the site’s network (never to a BMC), for a running step of that machine',
    with: httpProxyWithSchema,
    output: z.object({ status: z.number().int(), contentType: z.string().nullable(), body: z.string(), truncated: z.boolean() }),
    // A request may change the machine (POST, PUT …): another attempt would send it twice.
    retry: 'once',
  }),
  defineStep({
    ...command,
    use: 'logs.collect',
    summary: 'The site agent’s recent log entries',
    with: logsWithSchema,
    output: z.object({ entries: z.array(z.unknown()) }),
    retry: 'idempotent',
  }),
  defineStep({
    ...command,
    use: 'node.reboot',
    summary: 'Refused by a site agent (it does not reboot its own host from a workflow): UNSUPPORTED',
    with: z.unknown(),
    output: unsupported,
    retry: 'once',
  }),
] as const;
