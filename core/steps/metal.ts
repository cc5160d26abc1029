// The steps metal's shipped profiles use (spec 003 "Steps you can use"). Control-side ones
// are activities of the control-plane worker (activities/deploy-image.ts and activities/revoke-identity.ts); site, ramdisk and
// node ones are served by the agents on their queues.
import { z } from 'zod';
import { inspectOobOutputSchema } from '../schemas/inventory';
import { defineStep } from './registry';

const none = z.object({}).strict();
const imageRef = z.string().regex(/^[a-z0-9][a-z0-9._-]*@[A-Za-z0-9._-]+$/, 'an image ref is name@version');
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const macs = z.array(z.string().max(32)).max(64);

/** deploy.image's input: what deploy.deploy resolved from the catalog (a profile never names it). */
export const deployImageWithSchema = z
  .object({
    imageId: z.string().max(64).optional(),
    source: z.url({ protocol: /^https?$/, error: 'deploy.image streams from an http(s) URL' }),
    sha256,
    sizeBytes: z.number().int().nonnegative().optional(),
    format: z.enum(['raw', 'qcow2']).default('raw'),
    compression: z.enum(['none', 'gzip', 'zstd']).default('none'),
    userDataRef: z.string().max(64).optional(),
  })
  .strict();
export const deployImageOutputSchema = z.object({
  /** What deploy.deploy.check relies on: the digest of the bytes fetched, and how many were written. */
  sha256,
  bytesWritten: z.number().int().min(0).optional(),
  // Reported for the history, not relied on.
  bytesFetched: z.number().int().min(0).optional(),
  fetchedFrom: z.string().max(32).optional(),
  disk: z.string().max(64).optional(),
  readBackSha256: sha256.optional(),
  userData: z.object({ kind: z.string().max(32), written: z.literal(true) }).optional(),
});

/** media.insert as metal relays it to the site agent: the resolved ISO's URL, and its digest for the site's cached copy. */
export const siteMediaInsertWithSchema = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'virtual media takes an http(s) URL' }).max(2048),
    /** The ISO's digest: the site's verified copy is inserted instead of the URL when cached. */
    sha256: sha256.optional(),
  })
  .strict();

export const metalSteps = [
  defineStep({
    use: 'metal.ensureRamdisk',
    summary: 'Boots the machine into the ramdisk unless it is already connected: one-time PXE, boot entries per PXE MAC, power-cycle, wait for the join',
    // Run by the provision interpreter: it mints the discovery tokens and relays the BMC and
    // boot-entry commands to the site agent the workflow picked (a site agent does not serve it).
    queues: ['workflow'],
    with: none,
    output: z.object({ booted: z.boolean(), alreadyConnected: z.boolean(), macs, agentNodeId: z.string().max(64).nullable() }),
    // Each power cycle and boot entry is sent under its attempt's operation id; a join that ran out of time says itself it is not retried.
    retry: 'idempotent',
    defaultTimeout: '30m',
    defaultRetries: 1,
    heartbeat: '30s',
  }),
  defineStep({
    use: 'inspect.oob',
    summary: 'Verifies BMC access and inspects the machine out of band (PXE MACs, product UUID, architecture)',
    queues: ['site'],
    with: none,
    output: inspectOobOutputSchema,
    retry: 'idempotent',
    defaultTimeout: '5m',
    defaultRetries: 2,
  }),
  defineStep({
    use: 'deploy.deploy',
    summary: 'Resolves and verifies the image in the owner’s tenant, sends deploy.image to the ramdisk, checks the digest written',
    queues: ['control'],
    // Filled from the plan's image by the lifecycle when a profile gives none.
    with: z
      .object({
        image: z
          .object({ ref: imageRef, format: z.enum(['raw', 'qcow2', 'iso']).optional(), compression: z.enum(['none', 'zstd', 'gzip']).optional() })
          .strict()
          .optional(),
      })
      .strict(),
    // Its answer is its second half's (deploy.deploy.check): the catalog's image and the digest the ramdisk wrote.
    output: z.object({ imageId: z.string().max(64), sha256, bytesWritten: z.number().int().min(0).nullable() }),
    // Writing the image again writes the same bytes; a digest that differs says itself it is not retried.
    retry: 'idempotent',
    defaultTimeout: '45m',
    defaultRetries: 0,
    heartbeat: '1m',
  }),
  defineStep({
    use: 'deploy.image',
    summary: 'Streams a resolved image to the machine’s first disk and reads it back (deploy.deploy’s relay to the ramdisk)',
    queues: [],
    commandOn: ['ramdisk'],
    with: deployImageWithSchema,
    output: deployImageOutputSchema,
    retry: 'idempotent',
    defaultTimeout: '45m',
    defaultRetries: 0,
    heartbeat: '1m',
  }),
  defineStep({
    use: 'media.insert',
    summary: 'Mounts a catalog iso (image) as virtual media through the BMC, or sanboots it from the site cache where the BMC has none',
    // Run by the provision interpreter: it resolves and pins the ISO, then relays to the site agent it picked.
    queues: ['workflow'],
    commandOn: ['site'],
    shapes: { site: { with: siteMediaInsertWithSchema, output: z.object({ inserted: z.literal(true), fromCache: z.boolean(), sent: z.boolean() }) } },
    with: z.object({ image: imageRef.optional(), fromStep: z.string().min(1).max(64).optional() }).strict(),
    output: z.object({ imageId: z.string().max(64), sha256, via: z.enum(['virtual-media', 'sanboot']), macs }),
    retry: 'idempotent',
    defaultTimeout: '5m',
    defaultRetries: 2,
  }),
  defineStep({
    use: 'media.eject',
    summary: 'Ejects virtual media (and removes a sanboot boot entry)',
    queues: ['site'],
    with: none,
    output: z.object({ ejected: z.boolean(), sanbootEntriesRemoved: macs }),
    retry: 'idempotent',
    defaultTimeout: '5m',
    defaultRetries: 3,
  }),
  defineStep({
    use: 'userdata.render',
    summary: 'Mints a provisioned join token, renders the profile’s user data and stores it in the secret store (references only)',
    queues: ['control'],
    // The compiler fills these from the profile's userData, so the history shows what was rendered.
    with: z
      .object({ kind: z.enum(['cloud-init', 'ignition']), template: z.string().min(1).max(128), tokenTtlSeconds: z.number().int().min(300).max(86_400) })
      .partial()
      .strict(),
    output: z.object({ userDataRef: z.string().max(64), kind: z.string().max(32), joinTokenId: z.string().max(64) }),
    retry: 'idempotent',
    defaultTimeout: '1m',
    defaultRetries: 2,
  }),
  defineStep({
    use: 'metal.revokeIdentity',
    summary: 'Revokes the machine’s certificates and forgets its BMC credentials',
    queues: ['control'],
    with: none,
    output: z.object({ revokedCertificates: z.number().int().min(0), credentialsForgotten: z.boolean() }),
    retry: 'idempotent',
    defaultTimeout: '1m',
    defaultRetries: 3,
  }),
  defineStep({
    use: 'acceptance.check',
    summary: 'Runs one of the pool’s acceptance checks on an adopted machine’s own OS (cpus, memory, gpus): fails naming the check',
    queues: ['node'],
    with: z
      .object({
        name: z.string().min(1).max(64),
        params: z.record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean()])).optional(),
      })
      .strict(),
    output: z.object({ check: z.string().max(64), passed: z.literal(true), observed: z.unknown() }),
    retry: 'idempotent',
    defaultTimeout: '10m',
    defaultRetries: 0,
  }),
  defineStep({
    use: 'gpu.reset',
    summary: 'Resets the machine’s GPUs from the installed OS (nvidia-smi --gpu-reset)',
    queues: ['node'],
    with: none,
    output: z.object({ tool: z.string().max(256), reset: z.array(z.object({ index: z.number().int().min(0), uuid: z.string().max(128) })).max(64) }),
    // Resetting a reset GPU again does no harm.
    retry: 'idempotent',
    defaultTimeout: '10m',
    defaultRetries: 1,
  }),
] as const;
