// The steps every Ironflow control plane knows. The control-side ones are activities of
// the control-plane worker (activities/builtin-steps.ts); the machine-side ones are
// served by agents on their own queues (site, ramdisk, node modes of agent/).
import { z } from 'zod';
import { metalSteps } from './metal';
import { createStepRegistry, type StepDefinition } from './registry';

const none = z.object({}).strict();

export const builtinSteps: StepDefinition[] = [
  // ---- control plane ----
  {
    use: 'event.append',
    summary: 'Appends a workflow.step.note event to the node owner’s log (a marker operators can follow)',
    queues: ['control'],
    with: z.object({ message: z.string().min(1).max(512) }).strict(),
    defaultTimeout: '30s',
    defaultRetries: 3,
  },
  {
    use: 'wait.agentJoined',
    summary: 'Waits until an agent of the given role has a connected session for this machine',
    queues: ['control'],
    with: z.object({ role: z.enum(['ramdisk', 'node']) }).strict(),
    defaultTimeout: '15m',
    defaultRetries: 0,
    heartbeat: '10s',
  },
  // ---- site agent (BMC and boot server work) ----
  {
    use: 'boot.prepareRamdisk',
    summary: 'Writes the machine’s boot entry so its next network boot starts the ramdisk',
    queues: ['site'],
    with: none,
    defaultTimeout: '2m',
    defaultRetries: 3,
  },
  {
    use: 'boot.cleanUp',
    summary: 'Removes the machine’s boot entries (cleanup)',
    queues: ['site'],
    with: none,
    defaultTimeout: '2m',
    defaultRetries: 5,
  },
  {
    use: 'management.setBootDevice',
    summary: 'Sets the next boot device through the BMC',
    queues: ['site'],
    with: z.object({ device: z.enum(['pxe', 'disk', 'cd', 'bios']), persistent: z.boolean().optional() }).strict(),
    defaultTimeout: '2m',
    defaultRetries: 3,
    // The site agent heartbeats while it works: a dead agent's attempt is retried (and re-routed) after this.
    heartbeat: '5s',
  },
  {
    use: 'power.setPower',
    summary: 'Powers the machine on, off, or cycles it through the BMC',
    queues: ['site'],
    with: z.object({ action: z.enum(['on', 'off', 'cycle', 'reset']) }).strict(),
    defaultTimeout: '5m',
    defaultRetries: 3,
    // The site agent heartbeats while it works: a dead agent's attempt is retried (and re-routed) after this.
    heartbeat: '5s',
  },
  // ---- ramdisk agent (in-band work on the machine) ----
  {
    use: 'inventory.refresh',
    summary: 'Reports the machine’s inventory from the ramdisk; with expect, a machine that is not the enrolled one fails (machine-identity-mismatch)',
    queues: ['ramdisk', 'node'],
    // `expect` is filled by the lifecycle from the enrolled identity.
    with: z
      .object({
        expect: z
          .object({ productUuid: z.string().max(64).optional(), macs: z.array(z.string().max(17)).max(64).optional() })
          .strict()
          .optional(),
      })
      .strict(),
    defaultTimeout: '5m',
    defaultRetries: 2,
  },
  {
    use: 'disk.wipe',
    summary: 'Wipes the machine’s disks and reports a node-signed result',
    queues: ['ramdisk'],
    // fallback: what a disk whose drive cannot do `mode` gets instead (a retire's pool policy.retireWipe); absent: such a disk fails the step UNSUPPORTED.
    with: z
      .object({ mode: z.enum(['quick', 'secure-erase', 'crypto-erase']).default('quick'), fallback: z.enum(['quick', 'secure-erase']).optional() })
      .strict(),
    defaultTimeout: '2h',
    defaultRetries: 1,
    heartbeat: '30s',
  },
  {
    use: 'boot.kexec',
    summary: 'Boots the installed OS from the ramdisk (completes when the OS rejoins with await: rejoin)',
    queues: ['ramdisk'],
    with: none,
    defaultTimeout: '15m',
    defaultRetries: 0,
  },
  {
    use: 'diag.dcgm',
    summary: 'Runs NVIDIA DCGM diagnostics; fails unless every test passed',
    queues: ['ramdisk', 'node'],
    with: z.object({ level: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)]) }).strict(),
    defaultTimeout: '1h',
    defaultRetries: 0,
    heartbeat: '1m',
  },
];

/** The registry the API and the engine use; modules register their own steps on it. */
export const stepRegistry = createStepRegistry([...builtinSteps, ...metalSteps]);
