// The peer of Ironflow's provision workflow: bare Temporal running the same activity graph
// (three activities in sequence, each writing one event row), with none of Ironflow's
// machinery (no compiled plan, no status query, no memo, no sealing, no search attributes).
import { proxyActivities } from '@temporalio/workflow';
import type { BareActivities } from './bare-activities';

const { appendNote } = proxyActivities<BareActivities>({ startToCloseTimeout: '1 minute' });

export async function bareThreeSteps(nodeId: string): Promise<void> {
  for (let step = 1; step <= 3; step++) await appendNote(nodeId, step);
}
