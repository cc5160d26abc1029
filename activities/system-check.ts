import { appendEvent } from '../services/events';
import type { ActivityDeps } from './deps';

export function createSystemCheckActivities(deps: ActivityDeps) {
  return {
    async recordSystemCheck(checkId: string): Promise<string> {
      await deps.db.$transaction(async (tx) => {
        const check = await tx.systemCheck.update({
          where: { id: checkId },
          data: { status: 'succeeded', workerId: deps.workerId, completedAt: new Date() },
        });
        await appendEvent(tx, { tenantId: check.tenantId, type: 'system.check.succeeded', subjectId: checkId, data: { workerId: deps.workerId } });
      });
      return deps.workerId;
    },
  };
}
export type SystemCheckActivities = ReturnType<typeof createSystemCheckActivities>;
