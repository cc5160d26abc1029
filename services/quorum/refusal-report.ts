// An agent's report that it refused a destructive command (docs/quorum.md): a quorum.refused
// event in the node's tenant. Only from the node's own ramdisk or a site agent of its site, so
// one machine cannot write events about another.
import type { AuthenticatedAgent } from '../pki/authenticate-agent';
import type { Db } from '../db';
import { notFound } from '../../core/errors';
import { appendEvent } from '../events';
import type { QuorumRefusalReport } from '../schemas/quorum';

export async function recordAgentRefusal(db: Db, agent: AuthenticatedAgent, report: QuorumRefusalReport): Promise<{ recorded: true }> {
  const node = await db.node.findUnique({ where: { id: report.nodeId }, select: { id: true, tenantId: true, siteId: true } });
  const mayReport = node !== null && (agent.nodeId === node.id || (agent.role === 'site' && agent.siteId === node.siteId));
  if (!node || !mayReport) throw notFound('node', report.nodeId);
  await appendEvent(db, {
    tenantId: node.tenantId,
    type: 'quorum.refused',
    subjectId: node.id,
    data: {
      source: agent.role,
      agentNodeId: agent.nodeId,
      workflowId: report.workflowId,
      kind: report.kind,
      reason: report.reason,
      message: report.message,
      batchId: report.batchId ?? null,
    },
  });
  return { recorded: true };
}
