// disk.wipe on the machine's disks, each erased as agent/ramdisk/disk-erase.ts says for the
// mode (every disk's way decided before any is touched). The result is node-signed, and
// `attested` is true only when every read-back passed and the signature verifies with this
// agent's certificate.
import { z } from 'zod';
import { nodeSignatureValid, signNodeResult } from '../../../core/boot/node-signed';
import { parseWith } from '../../../core/errors';
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
    const signed = signNodeResult(deps.key, 'ironflow-disk-wipe-v1', result);
    const readBack = disks.every((d) => d.readBack);
    const attested = readBack && nodeSignatureValid(deps.certificatePem(), signed);
    deps.log.info('disks wiped', { nodeId: deps.nodeId, mode, disks: disks.length, readBack, attested });
    return { ...result, attested, signed: { ...signed } };
  };
}
