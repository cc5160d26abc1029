// The steps every Ironflow control plane knows. The control-side ones are activities of
// the control-plane worker (activities/builtin-steps.ts); the machine-side ones are
// served by agents on their own queues (site, ramdisk, node modes of agent/), and the
// agents' step maps are typed by StepsOf, so a step declared here and served by none (or
// served and declared nowhere) does not compile.
import { z } from 'zod';
import { bootDevices, powerActions } from '../schemas/bmc';
import { dcgmOutputSchema, dcgmWithSchema } from '../schemas/dcgm';
import { diskWipeOutputSchema, diskWipeWithSchema } from '../schemas/disk-wipe';
import { inventoryWithSchema, machineInventoryOutputSchema, siteHostInventorySchema } from '../schemas/inventory';
import { metalSteps } from './metal';
import { createStepRegistry, defineStep, servedQueues, type ServedOn, type StepQueue } from './registry';
import { siteCommandKinds } from './site-commands';

const none = z.object({}).strict();
const macs = z.array(z.string().max(32)).max(64);

export const builtinSteps = [
  // ---- control plane ----
  defineStep({
    use: 'event.append',
    summary: 'Appends a workflow.step.note event to the node owner’s log (a marker operators can follow)',
    queues: ['control'],
    with: z.object({ message: z.string().min(1).max(512) }).strict(),
    output: z.object({ appended: z.literal(true) }),
    retry: 'idempotent',
    defaultTimeout: '30s',
    defaultRetries: 3,
  }),
  defineStep({
    use: 'wait.agentJoined',
    summary: 'Waits until an agent of the given role has a connected session for this machine',
    queues: ['workflow'],
    with: z.object({ role: z.enum(['ramdisk', 'node']) }).strict(),
    output: z.object({ agentNodeId: z.string().max(64), role: z.enum(['ramdisk', 'node']) }),
    retry: 'idempotent',
    defaultTimeout: '15m',
    defaultRetries: 0,
    heartbeat: '10s',
  }),
  // ---- site agent (BMC and boot server work) ----
  defineStep({
    use: 'boot.prepareRamdisk',
    summary: 'Writes the machine’s boot entry so its next network boot starts the ramdisk',
    queues: ['site'],
    with: none,
    output: z.object({ macs, notAfter: z.string().max(64).nullable() }),
    retry: 'idempotent',
    defaultTimeout: '2m',
    defaultRetries: 3,
  }),
  defineStep({
    use: 'boot.cleanUp',
    summary: 'Removes the machine’s boot entries (cleanup)',
    queues: ['site'],
    with: none,
    output: z.object({ removed: macs, tokensRevoked: z.number().int().min(0), secretsDeleted: z.number().int().min(0) }),
    retry: 'idempotent',
    defaultTimeout: '2m',
    defaultRetries: 5,
  }),
  defineStep({
    use: 'management.setBootDevice',
    summary: 'Sets the next boot device through the BMC',
    queues: ['site'],
    with: z.object({ device: z.enum([...bootDevices, 'bios']), persistent: z.boolean().optional() }).strict(),
    output: z.object({ device: z.enum(bootDevices), persistent: z.boolean(), sent: z.boolean() }),
    // The BMC command runs once per operation id (agent/bmc/commands.ts): another attempt reuses it.
    retry: 'idempotent',
    defaultTimeout: '2m',
    defaultRetries: 3,
    // The site agent heartbeats while it works: a dead agent's attempt is retried (and re-routed) after this.
    heartbeat: '5s',
  }),
  defineStep({
    use: 'power.setPower',
    summary: 'Powers the machine on, off, or cycles it through the BMC',
    queues: ['site'],
    with: z.object({ action: z.enum(powerActions) }).strict(),
    output: z.object({ action: z.enum(powerActions), sent: z.boolean(), interrupted: z.boolean(), power: z.string().max(16).optional() }),
    // A cycle whose outcome is unknown is never sent again (agent/site/steps/power.ts): another attempt reads the power state.
    retry: 'idempotent',
    defaultTimeout: '5m',
    defaultRetries: 3,
    heartbeat: '5s',
  }),
  ...siteCommandKinds,
  // ---- ramdisk agent (in-band work on the machine) ----
  defineStep({
    use: 'inventory.refresh',
    summary: 'Reports the machine’s inventory from the ramdisk; with expect, a machine that is not the enrolled one fails (machine-identity-mismatch)',
    queues: ['ramdisk', 'node'],
    // A site agent reports its own host (a command kind of its role, spec 001).
    commandOn: ['site'],
    shapes: { site: { with: none, output: siteHostInventorySchema } },
    // `expect` is filled by the lifecycle from the enrolled identity.
    with: inventoryWithSchema,
    output: machineInventoryOutputSchema,
    retry: 'idempotent',
    defaultTimeout: '5m',
    defaultRetries: 2,
    // The agents heartbeat while a step runs (agent/common/heartbeating.ts): a task an agent
    // took and never finished is retried after this, not after the 5 minutes (in the fleet
    // bench's releases a fifth of the machines waited them out).
    heartbeat: '30s',
  }),
  defineStep({
    use: 'disk.wipe',
    summary: 'Wipes the machine’s disks and reports a node-signed result',
    queues: ['ramdisk'],
    // fallback: what a disk whose drive cannot do `mode` gets instead (a retire's pool policy.retireWipe); absent: such a disk fails the step UNSUPPORTED.
    with: diskWipeWithSchema,
    output: diskWipeOutputSchema,
    attested: true,
    retry: 'idempotent',
    defaultTimeout: '2h',
    defaultRetries: 1,
    heartbeat: '30s',
  }),
  defineStep({
    use: 'boot.kexec',
    summary: 'Boots the installed OS from the ramdisk (completes when the OS rejoins with await: rejoin)',
    queues: ['ramdisk'],
    with: none,
    output: z.object({ kexec: z.literal(true) }),
    // A second attempt would kexec the OS the first one started.
    retry: 'once',
    defaultTimeout: '15m',
    defaultRetries: 0,
  }),
  defineStep({
    use: 'diag.dcgm',
    summary: 'Runs NVIDIA DCGM diagnostics; fails unless every test passed',
    queues: ['ramdisk', 'node'],
    with: dcgmWithSchema,
    output: dcgmOutputSchema,
    attested: true,
    retry: 'idempotent',
    defaultTimeout: '1h',
    defaultRetries: 0,
    heartbeat: '1m',
  }),
] as const;

const knownSteps = [...builtinSteps, ...metalSteps] as const;
/** Every step this control plane ships. */
export type KnownStep = (typeof knownSteps)[number];
export type KnownUse = KnownStep['use'];
/** The uses a queue's worker serves: an agent's step map is a Record over these, so a missing or extra step does not compile. */
export type StepsOf<Q extends StepQueue> = ServedOn<KnownStep, Q>;

/** The registry the API and the engine use; modules register their own steps on it. */
export const stepRegistry = createStepRegistry(knownSteps);

/** The uses served on `queue`, typed (what an agent's worker registers). */
export const stepsServedOn = <Q extends StepQueue>(queue: Q): StepsOf<Q>[] =>
  knownSteps.filter((step) => servedQueues(step).includes(queue)).map((step) => step.use as StepsOf<Q>);
