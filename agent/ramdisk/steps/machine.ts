// boot.kexec (start the installed OS from disk) and diag.dcgm (GPU diagnostics, attested,
// with the source that produced them: agent/common/dcgm.ts).
import { dcgmStepResult } from '../../common/dcgm';
import type { RamdiskStep, RamdiskStepDeps } from './deps';

export function kexecStep(deps: RamdiskStepDeps): RamdiskStep {
  return async () => {
    // Loaded before answering: a machine that cannot kexec fails the step, not the wait for its join.
    const kexec = await deps.hardware.loadKexec();
    deps.log.info('booting the installed OS', { nodeId: deps.nodeId, from: kexec.source });
    // After answering: the ramdisk goes away with the kexec.
    setTimeout(() => void kexec.start().catch((error: Error) => deps.log.error('kexec failed', { error: error.message })), 50);
    return { kexec: true };
  };
}

export function dcgmStep(deps: RamdiskStepDeps): RamdiskStep {
  return (input) => dcgmStepResult(deps, deps.nodeId, input, deps.hardware);
}
