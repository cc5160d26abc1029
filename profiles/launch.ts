// Starts a provision workflow for a machine: resolve the profile as its tenant sees it (a
// shipped id, metal's power profiles among them, always the shipped profile: profiles/store.ts),
// compile it, lock the version, start `provision(plan, target)` with the ids, search
// attributes and memo that make the run findable in the Temporal Web UI, and record the run
// (workflow and run id), which is what lets its steps have the machine's secrets.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { IronflowConfig } from '../services/config';
import type { Db } from '../services/db';
import { IronflowError, notFound } from '../core/errors';
import { appendEvent } from '../services/events';
import type { Plan, ProvisionTarget } from '../core/plan';
import { searchAttributeKeys } from '../core/search-attributes';
import { planDetails, provisionSummary } from '../core/workflow-summaries';
import { compileProfile } from './compiler';
import { lockProfileVersion, resolveProfile } from './store';

export interface ProvisionStart {
  tenantId: string;
  nodeId: string;
  profileId: string;
  version?: number;
  provisionState: string;
  labels?: Record<string, string>;
}

export interface StartedProvision {
  workflowId: string;
  runId: string;
  profileRef: string;
  plan: Plan;
}

export const provisionWorkflowId = (nodeId: string, state: string, n: number): string => `node:${nodeId}:${state}:${n}`;

export async function startProvision(deps: { db: Db; temporal: Client; config: IronflowConfig }, input: ProvisionStart): Promise<StartedProvision> {
  const node = await deps.db.node.findFirst({ where: { id: input.nodeId, tenantId: input.tenantId, deletedAt: null } });
  if (!node) throw notFound('node', input.nodeId);
  const profile = await resolveProfile(deps.db, input.tenantId, input.profileId, input.version);
  const plan = compileProfile(profile.document, profile.tenantId);
  await lockProfileVersion(deps.db, profile);
  const target: ProvisionTarget = {
    tenantId: input.tenantId,
    nodeId: node.id,
    siteId: node.siteId,
    provisionState: input.provisionState,
    labels: input.labels ?? {},
  };
  const query = `NodeId = "${node.id}" AND ProvisionState = "${input.provisionState}"`;
  let n = (await deps.temporal.workflow.count(query)).count + 1;
  for (let tries = 0; ; tries++) {
    const workflowId = provisionWorkflowId(node.id, input.provisionState, n);
    try {
      const handle = await deps.temporal.workflow.start('provision', {
        workflowId,
        taskQueue: deps.config.controlQueue,
        args: [plan, target],
        typedSearchAttributes: new TypedSearchAttributes([
          { key: searchAttributeKeys.NodeId, value: node.id },
          { key: searchAttributeKeys.SiteId, value: node.siteId },
          { key: searchAttributeKeys.TenantId, value: input.tenantId },
          { key: searchAttributeKeys.ProvisionState, value: input.provisionState },
          { key: searchAttributeKeys.ProfileRef, value: plan.profile.ref },
        ]),
        memo: { profile: plan.profile.ref, profileTenant: plan.profile.tenantId, step: null },
        staticSummary: provisionSummary({ nodeId: node.id, state: input.provisionState, profileRef: plan.profile.ref, siteId: node.siteId }),
        staticDetails: planDetails(plan),
      });
      // The record services/bmc-access.ts trusts: this run, not any later one under the same id.
      await appendEvent(deps.db, {
        tenantId: input.tenantId,
        type: 'node.provision.workflow',
        subjectId: node.id,
        data: { workflowId, runId: handle.firstExecutionRunId, profile: plan.profile.ref },
      });
      return { workflowId, runId: handle.firstExecutionRunId, profileRef: plan.profile.ref, plan };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) || tries >= 20) {
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          throw new IronflowError('CONFLICT', `could not find a free workflow id for ${node.id} in ${input.provisionState}`, {});
        throw err;
      }
      n += 1;
    }
  }
}
