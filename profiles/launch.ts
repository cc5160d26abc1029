// Starts a provision workflow for a machine: resolve the profile as its tenant sees it (a
// shipped id, metal's power profiles among them, always the shipped profile: profiles/store.ts),
// compile it, lock the version, number the run (node:<id>:<state>:<n>, n from the database),
// start `provision(plan, target)` (services/temporal/starters.ts: the search attributes and
// memo that make the run findable in the Temporal Web UI), and record the run (workflow and
// run id), which is what lets its steps have the machine's secrets.
import type { Client } from '@temporalio/client';
import type { IronflowConfig } from '../services/config';
import { Prisma, type Db } from '../services/db';
import { IronflowError, notFound } from '../core/errors';
import { appendEvent } from '../services/events';
import type { Plan, ProvisionTarget } from '../core/plan';
import { startProvisionRun } from '../services/temporal/starters';
import { stateWorkflowId } from '../services/temporal/workflow-ids';
import { compileProfile } from './compiler';
import { lockProfileVersion, resolveProfile } from './store';
import { queryRows } from '../services/raw-statements';
import { nextRunNumber } from '../services/run-numbers';

export interface ProvisionStart {
  tenantId: string;
  nodeId: string;
  profileId: string;
  version?: number;
  provisionState: string;
  labels?: Record<string, string>;
  /** The run's id when its caller numbered it already (metal.power records it on the node first); else numbered here. */
  workflowId?: string;
}

export interface StartedProvision {
  workflowId: string;
  runId: string;
  profileRef: string;
  plan: Plan;
}

/** Ids a start tries before it gives up: each taken one (a run of the node's lifecycle under the same id) moves n on. */
const MAX_ID_TRIES = 20;

export async function startProvision(deps: { db: Db; temporal: Client; config: IronflowConfig }, input: ProvisionStart): Promise<StartedProvision> {
  // Raw, and only the columns a start uses: every start reads it.
  const [node] = await queryRows<{ id: string; siteId: string }>(
    deps.db,
    Prisma.sql`SELECT "id", "siteId" FROM "Node" WHERE "id" = ${input.nodeId} AND "tenantId" = ${input.tenantId} AND "deletedAt" IS NULL`,
  );
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
  for (let tries = 0; tries < (input.workflowId ? 1 : MAX_ID_TRIES); tries++) {
    const workflowId = input.workflowId ?? stateWorkflowId(node.id, input.provisionState, await nextRunNumber(deps.db, node.id, input.provisionState));
    const runId = await startProvisionRun(deps.temporal, deps.config.controlQueue, { workflowId, plan, target });
    if (runId === null) continue;
    // The record services/bmc-access.ts trusts: this run, not any later one under the same id.
    await appendEvent(deps.db, {
      tenantId: input.tenantId,
      type: 'node.provision.workflow',
      subjectId: node.id,
      data: { workflowId, runId, profile: plan.profile.ref },
    });
    return { workflowId, runId, profileRef: plan.profile.ref, plan };
  }
  throw new IronflowError(
    'CONFLICT',
    input.workflowId
      ? `workflow id ${input.workflowId} is taken already (the database's run numbers are behind Temporal's); ask again`
      : `could not find a free workflow id for ${node.id} in ${input.provisionState} after ${MAX_ID_TRIES} tries; start it again`,
    {},
  );
}
