// `ironflow metal status NODE`: what step the machine is on, what it waits for, why it
// failed and who has its logs (GET /v1/metal/nodes/:id/status). The table is one line per
// fact; --format json prints the whole answer.
import { z } from 'zod';
import { ROOT_TENANT } from '../../core/permissions';
import { idOf, tenantIdSchema } from '../../core/schemas/common';
import type { MetalStatusView } from '../../core/schemas/metal-status';
import { defineCommand } from '../command';

function facts(s: MetalStatusView): Array<[string, unknown]> {
  const step = s.step;
  const own = s.logs.machineAgent;
  return [
    ['state', s.provisionPhase ? `${s.state} (${s.provisionPhase})` : s.state],
    ['power', s.power],
    ['maintenance', s.maintenance && s.maintenanceReason ? `true (${s.maintenanceReason})` : s.maintenance],
    ['workflow', s.workflow ? `${s.workflow.workflowId} ${s.workflow.runStatus}${s.workflow.phase ? ` (${s.workflow.phase})` : ''}` : null],
    ['step', step ? `${step.key} ${step.use}` : null],
    ['attempt', step ? `${step.attempt}${step.activityAttempt !== null ? ` (activity attempt ${step.activityAttempt})` : ''}` : null],
    ['task queue', step?.taskQueue ?? null],
    ['step started', step?.startedAt ?? null],
    ['waiting for', s.waitingFor],
    ['progress', step?.progress ?? null],
    ['last failure', step?.lastFailure ?? null],
    ['error', s.error ? `${s.error.code}: ${s.error.message}` : null],
    ['failed from', s.failedFrom],
    ['machine agent', own ? `${own.role} ${own.agentNodeId} on ${own.taskQueue} (${own.connected ? 'connected' : `last seen ${own.lastSeenAt}`})` : null],
    ['site agents', s.logs.siteAgents.map((a) => `${a.agentNodeId}${a.connected ? '' : ' (not connected)'}`).join(', ') || null],
    ['console', s.logs.bmc.driver ? `through the BMC: ${s.logs.bmc.driver} ${s.logs.bmc.address ?? ''}`.trim() : null],
    ['events', `${s.logs.events.command} (subject ${s.logs.events.subjectId})`],
  ];
}

export const metalStatusCommand = defineCommand({
  name: 'metal status',
  summary: 'What a metal node is doing: state, workflow, step, attempt, waiting for, error, where its logs are: ironflow metal status NODE --tenant T',
  flags: z.object({ nodeId: idOf('node'), tenantId: tenantIdSchema.default(ROOT_TENANT) }),
  positionals: ['nodeId'],
  run: (ctx, f) => ctx.api.call<MetalStatusView>('GET', `/v1/metal/nodes/${f.nodeId}/status?tenantId=${encodeURIComponent(f.tenantId)}`),
  table: {
    rows: (result) => facts(result as MetalStatusView).map(([fact, value]) => ({ fact, value })),
    columns: [
      { header: 'fact', value: (r) => r.fact },
      { header: 'value', value: (r) => r.value },
    ],
  },
});
