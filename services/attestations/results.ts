// What a verified result must say before the control plane relies on it. Read from the
// signed result itself, never from a boolean beside it: a wipe counts when every disk read
// back and the mode is the one asked for; a DCGM run when every test passed at the level
// asked for, from a real dcgmi (or a machine with no GPUs), or from the machine emulator
// only in a pool whose policy allows emulated machines. The result is read by the result
// part of its step's output schema (core/steps: the output is the result with its attestation,
// which verify.ts checked), the schema the agents build it by.
import type { z } from 'zod';
import { IronflowError } from '../../core/errors';
import type { JsonObject } from '../../core/plan';
import { dcgmResultSchema } from '../../core/schemas/dcgm';
import { diskWipeResultSchema } from '../../core/schemas/disk-wipe';
import { attestationRefusalCode } from './verify';

const problemOf = (error: z.ZodError) => `${error.issues[0]?.path.join('.')}: ${error.issues[0]?.message}`;

export interface ResultPolicy {
  /** The step's `with` as the control plane planned it. */
  with: JsonObject;
  /** The node's pool allows emulated machines (policy.allowEmulatedMachines). */
  allowEmulatedMachines: boolean;
}

function refuse(use: string, stepKey: string, reason: string, message: string): IronflowError {
  return new IronflowError(attestationRefusalCode(use), `the ${use} result of ${stepKey} is not counted: ${message}`, { reason, stepKey, use });
}

/** Throws the refusal when the signed result does not say what the step needs. */
export function checkAttestedResult(use: string, stepKey: string, result: JsonObject, policy: ResultPolicy): void {
  if (use === 'disk.wipe') {
    const wipe = diskWipeResultSchema.safeParse(result);
    if (!wipe.success) throw refuse(use, stepKey, 'result-malformed', `it is not a wipe result (${problemOf(wipe.error)})`);
    const asked = typeof policy.with.mode === 'string' ? policy.with.mode : 'quick';
    if (wipe.data.mode !== asked) throw refuse(use, stepKey, 'wipe-mode-mismatch', `it reports a ${wipe.data.mode} wipe; the step asked for ${asked}`);
    // A disk whose drive cannot do the mode may get the step's stated fallback, and nothing else.
    const fallback = typeof policy.with.fallback === 'string' ? policy.with.fallback : undefined;
    const otherMode = wipe.data.disks.find((d) => d.mode !== undefined && d.mode !== asked && d.mode !== fallback);
    if (otherMode)
      throw refuse(
        use,
        stepKey,
        'wipe-mode-mismatch',
        `disk ${otherMode.name} reports a ${otherMode.mode} wipe; the step asked for ${asked}${fallback ? ` (fallback ${fallback})` : ''}`,
      );
    const failed = wipe.data.disks.filter((d) => !d.readBack).map((d) => d.name);
    if (failed.length > 0) throw refuse(use, stepKey, 'wipe-read-back-failed', `disk ${failed.join(', ')} did not read back as wiped`);
    return;
  }
  if (use === 'diag.dcgm') {
    const dcgm = dcgmResultSchema.safeParse(result);
    if (!dcgm.success) throw refuse(use, stepKey, 'result-malformed', `it is not a DCGM result (${problemOf(dcgm.error)})`);
    const asked = typeof policy.with.level === 'number' ? policy.with.level : 1;
    if (dcgm.data.level < asked) throw refuse(use, stepKey, 'dcgm-level-mismatch', `it ran level ${dcgm.data.level}; the step asked for level ${asked}`);
    if (dcgm.data.source === 'emulated' && !policy.allowEmulatedMachines) {
      throw refuse(
        use,
        stepKey,
        'emulated-machine',
        "it comes from the machine emulator, not a real dcgmi run, and the node's pool does not allow emulated machines (pool policy allowEmulatedMachines)",
      );
    }
    const failed = dcgm.data.tests.filter((t) => !t.passed).map((t) => t.name);
    if (failed.length > 0) throw refuse(use, stepKey, 'dcgm-failed', `DCGM test ${failed.join(', ')} failed`);
    // dcgmi always runs tests; an emulated machine without GPUs reports none, like a real one (no-gpus).
    if (dcgm.data.source === 'dcgmi' && dcgm.data.tests.length === 0) throw refuse(use, stepKey, 'dcgm-no-tests', 'dcgmi reports no tests');
  }
}
