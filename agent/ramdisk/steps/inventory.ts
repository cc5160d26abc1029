// inventory.refresh from the ramdisk: the sections system, nics and disks (and gpus), as
// the machine reports them. With `expect` (the enrolled identity), a machine that is not
// the enrolled one fails before anything is written to it (machine-identity-mismatch).
import { IronflowError, parseWith } from '../../../core/errors';
import { normalizeMac } from '../../../core/mac';
import { sameProductUuid } from '../../../core/product-uuid';
import { inventoryWithSchema, type InventoryOutput } from '../../../core/schemas/inventory';
import type { RamdiskStep, RamdiskStepDeps } from './deps';

export function inventoryStep(deps: RamdiskStepDeps): RamdiskStep {
  return async (input): Promise<InventoryOutput> => {
    const { expect } = parseWith(inventoryWithSchema, input.with);
    const { system, nics, disks, gpus } = deps.hardware;
    const macs = nics.map((n) => normalizeMac(n.mac)).filter((m): m is string => m !== undefined);
    if (expect?.productUuid && system.productUuid && !sameProductUuid(expect.productUuid, system.productUuid)) {
      throw new IronflowError('DRIVER_ERROR', `this machine's product UUID is not the enrolled one`, { reason: 'machine-identity-mismatch' });
    }
    const missing = (expect?.macs ?? []).map((m) => normalizeMac(m)).filter((m) => m && !macs.includes(m));
    if (missing.length > 0)
      throw new IronflowError('DRIVER_ERROR', `this machine has no NIC ${missing.join(', ')} of the enrolled ones`, { reason: 'machine-identity-mismatch' });
    return {
      sections: {
        system: { ...system },
        nics: nics.map((n) => ({ mac: normalizeMac(n.mac) ?? n.mac, ip: n.ip ?? null })),
        disks: disks.map((d) => ({ name: d.name, sizeBytes: d.sizeBytes })),
        gpus: gpus.map((g) => ({ ...g })),
      },
      collectedAt: new Date().toISOString(),
    };
  };
}
