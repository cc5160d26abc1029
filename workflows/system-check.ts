// The wiring check: proves API → Temporal → control-plane worker → database works.
import { proxyActivities } from '@temporalio/workflow';
import type { SystemCheckActivities } from '../activities/system-check';

const { recordSystemCheck } = proxyActivities<SystemCheckActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

export async function systemCheck(input: { checkId: string }): Promise<{ checkId: string; workerId: string }> {
  const workerId = await recordSystemCheck(input.checkId);
  return { checkId: input.checkId, workerId };
}
