// Every site step kind's activity, keyed by kind: the type makes the list in
// step-kinds.ts and the implementations one and the same set.
import type { SiteStepKind } from '../step-kinds';
import { inventoryStep, logsStep, rebootStep } from './agent-host';
import { bmcQueryStep } from './bmc-query';
import { unsupportedBmcStep } from './bmc-unsupported';
import { cleanUpStep, prepareRamdiskStep } from './boot';
import { bootDeviceStep } from './boot-device';
import type { SiteStep, SiteStepDeps } from './deps';
import { httpProxyStep } from './http-proxy';
import { inspectOobStep } from './inspect-oob';
import { mediaEjectStep, mediaInsertStep } from './media';
import { powerStep } from './power';

export function createSiteSteps(deps: SiteStepDeps): Record<SiteStepKind, SiteStep> {
  return {
    'bmc.query': bmcQueryStep(deps),
    'bmc.boot': bootDeviceStep(deps),
    'bmc.power': powerStep(deps),
    'bmc.rotate': unsupportedBmcStep('bmc.rotate'),
    'bmc.firmware': unsupportedBmcStep('bmc.firmware'),
    'bmc.storage': unsupportedBmcStep('bmc.storage'),
    'boot.prepareRamdisk': prepareRamdiskStep(deps),
    'boot.cleanUp': cleanUpStep(deps),
    'site.httpProxy': httpProxyStep(deps),
    'inventory.refresh': inventoryStep(deps),
    'logs.collect': logsStep(deps),
    'node.reboot': rebootStep(),
    'power.setPower': powerStep(deps),
    'management.setBootDevice': bootDeviceStep(deps),
    'inspect.oob': inspectOobStep(deps),
    'media.insert': mediaInsertStep(deps),
    'media.eject': mediaEjectStep(deps),
  };
}
