// The bare peer's one activity: the same event row Ironflow's `event.append` step writes.
import type { Db } from '../../services/db';
import { appendEvent } from '../../services/events';

export function createBareActivities(db: Db) {
  return {
    async appendNote(nodeId: string, step: number): Promise<void> {
      await appendEvent(db, { tenantId: 'root', type: 'workflow.step.note', subjectId: nodeId, data: { step, message: `step ${step}` } });
    },
  };
}
export type BareActivities = ReturnType<typeof createBareActivities>;
