// The steps metal's shipped profiles use (spec 003 "Steps you can use"). Control-side ones
// are activities of the control-plane worker (activities/deploy-image.ts and activities/revoke-identity.ts); site, ramdisk and
// node ones are served by the agents on their queues.
import { z } from 'zod';
import type { StepDefinition } from './registry';

const none = z.object({}).strict();
const imageRef = z.string().regex(/^[a-z0-9][a-z0-9._-]*@[A-Za-z0-9._-]+$/, 'an image ref is name@version');

export const metalSteps: StepDefinition[] = [
  {
    use: 'metal.ensureRamdisk',
    summary: 'Boots the machine into the ramdisk unless it is already connected: one-time PXE, boot entries per PXE MAC, power-cycle, wait for the join',
    // A control step: it mints the discovery tokens and relays the BMC and boot-entry
    // commands to the site agent the workflow picked (a site agent does not serve it).
    queues: ['control'],
    relaysViaSite: true,
    with: none,
    defaultTimeout: '30m',
    defaultRetries: 1,
    heartbeat: '30s',
  },
  {
    use: 'inspect.oob',
    summary: 'Verifies BMC access and inspects the machine out of band (PXE MACs, product UUID, architecture)',
    queues: ['site'],
    with: none,
    defaultTimeout: '5m',
    defaultRetries: 2,
  },
  {
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
    defaultTimeout: '45m',
    defaultRetries: 0,
    heartbeat: '1m',
  },
  {
    use: 'media.insert',
    summary: 'Mounts a catalog iso (image) as virtual media through the BMC, or sanboots it from the site cache where the BMC has none',
    // A control step: it resolves and pins the ISO, then relays to the site agent the workflow picked.
    queues: ['control'],
    relaysViaSite: true,
    with: z.object({ image: imageRef.optional(), fromStep: z.string().min(1).max(64).optional() }).strict(),
    defaultTimeout: '5m',
    defaultRetries: 2,
  },
  {
    use: 'media.eject',
    summary: 'Ejects virtual media (and removes a sanboot boot entry)',
    queues: ['site'],
    with: none,
    defaultTimeout: '5m',
    defaultRetries: 3,
  },
  {
    use: 'userdata.render',
    summary: 'Mints a provisioned join token, renders the profile’s user data and stores it in the secret store (references only)',
    queues: ['control'],
    // The compiler fills these from the profile's userData, so the history shows what was rendered.
    with: z
      .object({ kind: z.enum(['cloud-init', 'ignition']), template: z.string().min(1).max(128), tokenTtlSeconds: z.number().int().min(300).max(86_400) })
      .partial()
      .strict(),
    defaultTimeout: '1m',
    defaultRetries: 2,
  },
  {
    use: 'metal.revokeIdentity',
    summary: 'Revokes the machine’s certificates and forgets its BMC credentials',
    queues: ['control'],
    with: none,
    defaultTimeout: '1m',
    defaultRetries: 3,
  },
  {
    use: 'acceptance.check',
    summary: 'Runs one of the pool’s acceptance checks on an adopted machine’s own OS (cpus, memory, gpus): fails naming the check',
    queues: ['node'],
    with: z
      .object({
        name: z.string().min(1).max(64),
        params: z.record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean()])).optional(),
      })
      .strict(),
    defaultTimeout: '10m',
    defaultRetries: 0,
  },
  {
    use: 'gpu.reset',
    summary: 'Resets the machine’s GPUs from the installed OS (nvidia-smi --gpu-reset)',
    queues: ['node'],
    with: none,
    defaultTimeout: '10m',
    defaultRetries: 1,
  },
];
