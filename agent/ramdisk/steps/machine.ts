// boot.kexec (start the installed OS from disk) and diag.dcgm (GPU diagnostics: a real
// `dcgmi diag` when installed, else the machine's own report; on a machine without GPUs, a
// result that says there was nothing to diagnose; node-signed in every case).
import { z } from 'zod';
import { signNodeResult } from '../../../core/boot/node-signed';
import { IronflowError, parseWith } from '../../../core/errors';
import type { JsonObject } from '../../../core/plan';
import { runDcgmi } from '../../common/dcgm';
import type { RamdiskStep, RamdiskStepDeps } from './deps';

export function kexecStep(deps: RamdiskStepDeps): RamdiskStep {
  return async () => {
    deps.log.info('booting the installed OS', { nodeId: deps.nodeId });
    // After answering: the ramdisk goes away with the kexec.
    setTimeout(() => void deps.hardware.kexec().catch((error: Error) => deps.log.error('kexec failed', { error: error.message })), 50);
    return { kexec: true };
  };
}

export function dcgmStep(deps: RamdiskStepDeps): RamdiskStep {
  return async (input) => {
    const { level } = parseWith(z.object({ level: z.number().int().min(1).max(4).default(1) }).strict(), input.with);
    if (deps.hardware.gpus.length === 0) {
      // Nothing for DCGM to diagnose: a signed result that says so, not a report of tests that never ran.
      const result = { nodeId: deps.nodeId, workflowId: input.workflowId, level, tests: [], source: 'no-gpus' } as unknown as JsonObject;
      return { ...result, passed: true, signed: { ...signNodeResult(deps.key, 'ironflow-dcgm-v1', result) } };
    }
    const real = await runDcgmi(level);
    const report = real ?? (await deps.hardware.dcgm?.(level));
    if (!report) throw new IronflowError('UNSUPPORTED', 'no dcgmi on this ramdisk and the machine reports no DCGM result', {});
    const result = { nodeId: deps.nodeId, workflowId: input.workflowId, level, tests: report.tests, source: real ? 'dcgmi' : 'machine' } as unknown as JsonObject;
    const signed = signNodeResult(deps.key, 'ironflow-dcgm-v1', result);
    const failed = report.tests.filter((t) => !t.passed);
    if (failed.length > 0) throw new IronflowError('DRIVER_ERROR', `DCGM level ${level}: ${failed.map((t) => t.name).join(', ')} failed`, { reason: 'dcgm-failed', failed: failed.map((t) => t.name) });
    return { ...result, passed: true, signed: { ...signed } };
  };
}
