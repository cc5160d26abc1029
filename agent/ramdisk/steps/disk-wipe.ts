// disk.wipe on the machine's disks, each erased as agent/ramdisk/disk-erase.ts says for the
// mode (every disk's way decided before any is touched; `fallback`, when the plan allows one,
// is what a disk whose drive cannot do the mode gets instead). The result is attested (signed
// with this ramdisk's certificate key for this node, run and step: agent/common/attest.ts);
// the control plane counts it only when the signature verifies and every disk read back.
import { parseWith } from '../../../core/errors';
import { diskWipeWithSchema } from '../../../core/schemas/disk-wipe';
import { attestStepResult } from '../../common/attest';
import { eraseDisk, planErase } from '../disk-erase';
import type { RamdiskStep, RamdiskStepDeps } from './deps';

export function diskWipeStep(deps: RamdiskStepDeps): RamdiskStep {
  return async (input) => {
    const { mode, fallback } = parseWith(diskWipeWithSchema, input.with);
    const disks = [];
    for (const plan of await planErase(deps.hardware, mode, fallback)) {
      disks.push(await eraseDisk(deps.hardware, plan, (details) => deps.heartbeat({ disk: plan.disk.name, ...details })));
    }
    const result = { nodeId: deps.nodeId, workflowId: input.workflowId, mode, disks, wipedAt: new Date().toISOString() };
    deps.log.info('disks wiped', {
      nodeId: deps.nodeId,
      mode,
      disks: disks.length,
      fallbacks: disks.filter((d) => d.fallbackFrom).length,
      readBack: disks.every((d) => d.readBack),
    });
    return attestStepResult(deps, deps.nodeId, input, result);
  };
}
