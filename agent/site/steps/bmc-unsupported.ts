// bmc.rotate, bmc.firmware, bmc.storage: accepted kinds whose driver operations do not
// exist yet. They fail at once (UNSUPPORTED, never retried) naming what is missing,
// rather than pretending to have done anything.
import { IronflowError } from '../../../core/errors';
import type { SiteStep } from './deps';

const missing: Record<'bmc.rotate' | 'bmc.firmware' | 'bmc.storage', string> = {
  'bmc.rotate': 'rotating BMC credentials (AccountService) is not implemented by the drivers yet; set new credentials on the machine record',
  'bmc.firmware': 'firmware updates (UpdateService) are not implemented by the drivers yet',
  'bmc.storage': 'storage configuration (RAID volumes) is not implemented by the drivers yet',
};

export function unsupportedBmcStep(kind: keyof typeof missing): SiteStep {
  return async () => {
    throw new IronflowError('UNSUPPORTED', `${kind}: ${missing[kind]}`, { kind });
  };
}
