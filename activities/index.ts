// All control-plane activities, built from their dependencies.
import type { ActivityDeps } from './deps';
import { createSystemCheckActivities } from './system-check';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createSystemCheckActivities(deps),
  };
}
export type ControlPlaneActivities = ReturnType<typeof createActivities>;
