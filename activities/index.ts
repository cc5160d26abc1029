// All control-plane activities, built from their dependencies.
import type { ActivityDeps } from './deps';
import { createAgentConnectionActivities } from './agent-connections';
import { createBootSlotActivities } from './boot-slots';
import { createMetalBulkActivities } from './metal-bulk';
import { createMetalConfirmMacActivities } from './metal-confirm-mac';
import { createMetalMediaActivities } from './metal-media';
import { createDeployImageActivities } from './deploy-image';
import { createRevokeIdentityActivities } from './revoke-identity';
import { createNodeLifecycleActivities } from './node-lifecycle';
import { createBuiltinStepActivities } from './builtin-steps';
import { createQuorumActivities } from './quorum';
import { createRamdiskBootActivities } from './ramdisk-boot';
import { createSiteBootActivities } from './site-boot';
import { createSiteRoutingActivities } from './site-routing';
import { createSystemCheckActivities } from './system-check';
import { createUserDataActivities } from './userdata-render';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createSiteRoutingActivities(deps),
    ...createBuiltinStepActivities(deps),
    ...createSystemCheckActivities(deps),
    ...createSiteBootActivities(deps),
    ...createNodeLifecycleActivities(deps),
    ...createDeployImageActivities(deps),
    ...createRevokeIdentityActivities(deps),
    ...createRamdiskBootActivities(deps),
    ...createAgentConnectionActivities(deps),
    ...createBootSlotActivities(deps),
    ...createMetalConfirmMacActivities(deps),
    ...createMetalMediaActivities(deps),
    ...createUserDataActivities(deps),
    ...createMetalBulkActivities(deps),
    ...createQuorumActivities(deps),
  };
}
export type ControlPlaneActivities = ReturnType<typeof createActivities>;
