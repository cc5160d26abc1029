// Builds the driver a machine's BMC target names.
import { parseWith } from '../../core/errors';
import { bmcTargetSchema, type BmcTargetInput } from '../../core/schemas/bmc';
import type { BmcCredentials, BmcDriver } from './driver';
import { createIpmiDriver, type IpmiDriverOptions } from './ipmi';
import { createRedfishDriver, type RedfishDriverOptions } from './redfish';

export type { BmcCredentials, BmcDriver, BootDevice, BootSetting, Inspection, PowerAction, PowerState } from './driver';
export { virtualMediaOf, waitForPower } from './driver';

export function createBmcDriver(target: BmcTargetInput, credentials: BmcCredentials, options: RedfishDriverOptions & IpmiDriverOptions = {}): BmcDriver {
  const parsed = parseWith(bmcTargetSchema, target);
  return parsed.driver === 'redfish' ? createRedfishDriver(parsed, credentials, options) : createIpmiDriver(parsed, credentials, options);
}
