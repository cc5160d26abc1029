// disk.wipe on the machine's disks, each erased as agent/ramdisk/disk-erase.ts says for the
// mode (every disk's way decided before any is touched). The result is attested (signed with
// this ramdisk's certificate key for this node, run and step: agent/common/attest.ts); the
// control plane counts it only when the signature verifies and every disk read back.
import { z } from 'zod';
import { parseWith } from '../../../core/errors';
import { attestStepResult } from '../../common/attest';
import { eraseDisk, planErase } from '../disk-erase';
import type { RamdiskStep, RamdiskStepDeps } from './deps';

const wipeWith = z.object({ mode: z.enum(['quick', 'secure-erase', 'crypto-erase']).default('quick') }).strict();

export function diskWipeStep(deps: RamdiskStepDeps): RamdiskStep {
  return async (input) => {
    const { mode } = parseWith(wipeWith, input.with);
    const disks = [];
    for (const plan of await planErase(deps.hardware.disks, mode)) {
      disks.push(await eraseDisk(plan, (done) => deps.heartbeat({ disk: plan.disk.name, bytesWiped: done })));
    }
    const result = { nodeId: deps.nodeId, workflowId: input.workflowId, mode, disks, wipedAt: new Date().toISOString() };
    deps.log.info('disks wiped', { nodeId: deps.nodeId, mode, disks: disks.length, readBack: disks.every((d) => d.readBack) });
    return attestStepResult(deps, deps.nodeId, input, result);
  };
}
