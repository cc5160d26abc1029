// Every site step kind's activity, keyed by kind: the type makes the list in
// step-kinds.ts and the implementations one and the same set.
import { destructiveKindsOfStep } from '../../../core/quorum/destructive';
import { requireApprovedBatch } from '../../common/quorum-check';
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
import { pxeBootStep } from './pxe-boot';

export function createSiteSteps(deps: SiteStepDeps): Record<SiteStepKind, SiteStep> {
  const steps: Record<SiteStepKind, SiteStep> = {
    'bmc.query': bmcQueryStep(deps),
    'bmc.boot': bootDeviceStep(deps),
    'bmc.power': powerStep(deps),
    'bmc.rotate': unsupportedBmcStep('bmc.rotate'),
    'bmc.firmware': unsupportedBmcStep('bmc.firmware'),
    'bmc.storage': unsupportedBmcStep('bmc.storage'),
    'boot.prepareRamdisk': prepareRamdiskStep(deps),
    'boot.cleanUp': cleanUpStep(deps),
    'boot.pxeBoot': pxeBootStep(deps),
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
  // Every destructive kind (BMC commands but queries, site.httpProxy) checks its batch first.
  const quorum = {
    pins: deps.quorumPins ?? [],
    client: deps.client,
    signer: deps.signer,
    log: deps.log,
    nodeIdOf: (input: { target: { nodeId: string } }) => input.target.nodeId,
  };
  // boot.pxeBoot is checked for each kind it sends the BMC (a boot device and power commands).
  for (const kind of Object.keys(steps) as SiteStepKind[])
    for (const sent of destructiveKindsOfStep(kind)) steps[kind] = requireApprovedBatch(sent, steps[kind], quorum);
  return steps;
}
