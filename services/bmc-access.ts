// Granting a site agent a machine's BMC access for one workflow step: only to a site
// agent of the machine's own site, only while a workflow of that machine runs (asked of
// Temporal, not of the caller) that the control plane itself started (the node row names it
// as the running state workflow, or startProvision recorded its run: a workflow started
// straight through Temporal opened the BMC password before, issue 13), and each grant or
// refusal is a security event that names who, which machine and which workflow, never the
// credential.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { Node } from '../generated/prisma-sqlite/client';
import type { Db } from './db';
import { IronflowError, parseWith } from '../core/errors';
import { appendEvent } from './events';
import { findNodeById } from './metal/node-reads';
import { recordRefusal, refusal } from './joins/refusal';
import type { AuthenticatedAgent } from './pki/authenticate-agent';
import { bmcCredentialsSchema, type BmcAccess, type BmcAccessRequest } from '../core/schemas/agent-bmc-access';
import { bmcDriverNames } from '../core/schemas/bmc';
import { RecentCache } from '../core/recent-cache';
import type { SecretStore } from './secret-store';
import { recentlyRunning, runningNow, type RunningRun } from './temporal/recent-runs';
import { nodeIdOf } from './temporal/search-attributes';
import { isStateWorkflowOf } from './temporal/workflow-ids';

export interface BmcAccessDeps {
  db: Db;
  temporal: Client;
  secrets: SecretStore;
}

/**
 * The workflow's run when it runs now and is about this machine (its NodeId search attribute, or
 * its id), else null. With `runId` (a site agent's step names its run), only that run, as
 * Temporal said up to RECENTLY_RUNNING_MS before (temporal/recent-runs.ts); else Temporal is asked.
 */
async function runningFor(temporal: Client, workflowId: string, nodeId: string, runId?: string): Promise<RunningRun | null> {
  const run = runId === undefined ? await runningNow(temporal, workflowId) : await recentlyRunning(temporal, workflowId, runId);
  if (!run) return null;
  const attributeNode = nodeIdOf(run);
  const about = attributeNode === nodeId || (attributeNode === undefined && isStateWorkflowOf(workflowId, nodeId));
  return about ? run : null;
}

/** Whether the workflow runs now and is about this machine (its NodeId search attribute, or its id). */
export async function workflowRunsFor(temporal: Client, workflowId: string, nodeId: string): Promise<boolean> {
  return (await runningFor(temporal, workflowId, nodeId)) !== null;
}

/** How far back a machine's run records are read (its latest runs; a running one is recent). */
const RUN_RECORDS_READ = 500;
/** startProvision records a run once Temporal accepted it, so its first step may ask a moment before. */
const RUN_RECORD_WAIT_MS = 2_000;
const RUN_RECORD_POLL_MS = 100;

/** Runs found recorded, per database: a record is never taken back (events are only appended), so each run is read once. */
const recordedRuns = new WeakMap<Db, RecentCache<string, true>>();
/** Bounds the memory; a run forgotten is read again. */
const RECORDED_RUNS_KEPT = 10_000;

/** Whether startProvision (profiles/launch.ts) recorded this run of the workflow for the machine. */
async function recordedRun(db: Db, node: Pick<Node, 'id' | 'tenantId'>, workflowId: string, runId: string): Promise<boolean> {
  let known = recordedRuns.get(db);
  if (!known) recordedRuns.set(db, (known = new RecentCache(RECORDED_RUNS_KEPT)));
  const key = `${node.tenantId}/${node.id}/${workflowId}/${runId}`;
  if (known.has(key)) return true;
  const records = await db.event.findMany({
    where: { tenantId: node.tenantId, type: 'node.provision.workflow', subjectId: node.id },
    orderBy: { seq: 'desc' },
    take: RUN_RECORDS_READ,
    select: { data: true },
  });
  const recorded = records.some(({ data }) => {
    const record = data as { workflowId?: unknown; runId?: unknown } | null;
    return record?.workflowId === workflowId && record.runId === runId;
  });
  if (recorded) known.set(key, true);
  return recorded;
}

/**
 * `known`: the workflow runs now, is about this machine, and the control plane started it
 * (the node row's running state workflow, or a run startProvision recorded with its run id,
 * so a later run forged under a known id is not). `unknown`: it runs, nothing names it.
 */
export async function workflowStanding(
  deps: Pick<BmcAccessDeps, 'db' | 'temporal'>,
  node: Pick<Node, 'id' | 'tenantId' | 'workflowId'>,
  workflowId: string,
  runId?: string,
): Promise<'known' | 'unknown' | 'not-running'> {
  const description = await runningFor(deps.temporal, workflowId, node.id, runId);
  if (!description) return 'not-running';
  if (node.workflowId === workflowId) return 'known';
  const deadline = Date.now() + RUN_RECORD_WAIT_MS;
  for (;;) {
    if (await recordedRun(deps.db, node, workflowId, description.runId)) return 'known';
    if (Date.now() >= deadline) return 'unknown';
    await sleep(RUN_RECORD_POLL_MS);
  }
}

/** The refusal of a running workflow the control plane did not start. */
export const unknownWorkflowRefusal = (workflowId: string, nodeId: string) =>
  refusal(
    'PERMISSION_DENIED',
    'workflow-unknown',
    `workflow ${workflowId} of node ${nodeId} was not started by the control plane (it is neither the node's state workflow nor a run it started); access is granted only for its own workflows`,
  );

/**
 * The machine a site agent's running step is about, or a refusal: a site agent of the
 * machine's own site, and a workflow of that machine that runs now and that the control
 * plane started.
 */
export async function machineOfRunningStep(deps: BmcAccessDeps, agent: AuthenticatedAgent, input: BmcAccessRequest) {
  if (agent.role !== 'site' || !agent.siteId)
    throw refusal('PERMISSION_DENIED', 'not-a-site-agent', `only site agents act for machines' steps; ${agent.nodeId} is a ${agent.role} agent`);
  const node = await findNodeById(deps.db, input.nodeId);
  // Another site's machine is NOT_FOUND: an agent learns nothing about other sites.
  if (!node || node.deletedAt || node.siteId !== agent.siteId)
    throw refusal('NOT_FOUND', 'node-not-at-site', `node ${input.nodeId} not found at site ${agent.siteId}`);
  const standing = await workflowStanding(deps, node, input.workflowId, input.runId);
  if (standing === 'not-running') {
    throw refusal(
      'PERMISSION_DENIED',
      'workflow-not-running',
      `workflow ${input.workflowId} is not a running workflow of node ${node.id}; access is granted only for a running step`,
    );
  }
  if (standing === 'unknown') throw unknownWorkflowRefusal(input.workflowId, node.id);
  return node;
}

/** The tenant a refusal's event goes to: the machine's when the agent may see it, else the agent's. */
export async function refusalTenant(db: Db, agent: AuthenticatedAgent, nodeId: string): Promise<string> {
  const node = await db.node.findUnique({ where: { id: nodeId }, select: { siteId: true, tenantId: true } });
  return node && node.siteId === agent.siteId ? node.tenantId : agent.tenantId;
}

export async function grantBmcAccess(deps: BmcAccessDeps, agent: AuthenticatedAgent, input: BmcAccessRequest): Promise<BmcAccess> {
  const subject = { nodeId: input.nodeId, workflowId: input.workflowId, agentNodeId: agent.nodeId };
  try {
    const node = await machineOfRunningStep(deps, agent, input);
    const driver = bmcDriverNames.find((d) => d === node.bmcDriver);
    if (!driver || !node.bmcAddress || !node.bmcCredentialsRef) {
      throw refusal('INVALID_STATE', 'no-bmc', `node ${node.id} has no BMC driver, address and credentials on record; enroll it with its BMC first`);
    }
    let credentials;
    try {
      credentials = parseWith(bmcCredentialsSchema, JSON.parse(await deps.secrets.get(deps.db, node.bmcCredentialsRef)));
    } catch (error) {
      if (error instanceof IronflowError && error.code === 'NOT_FOUND')
        throw refusal('INVALID_STATE', 'bmc-credentials-missing', `the BMC credentials of node ${node.id} are gone; set them again`);
      throw refusal('INVALID_STATE', 'bmc-credentials-malformed', `the BMC credentials of node ${node.id} are not {username, password}; set them again`);
    }
    await appendEvent(deps.db, {
      tenantId: node.tenantId,
      type: 'security.bmc-access.granted',
      subjectId: node.id,
      data: { ...subject, siteId: agent.siteId, serial: agent.serial, driver, address: node.bmcAddress, credentialsRef: node.bmcCredentialsRef },
    });
    return { driver, address: node.bmcAddress, caPem: node.bmcCaPem, username: credentials.username, password: credentials.password };
  } catch (error) {
    return recordRefusal(deps.db, 'security.bmc-access.refused', error, {
      tenantId: await refusalTenant(deps.db, agent, input.nodeId),
      subjectId: input.nodeId,
      data: { ...subject, siteId: agent.siteId },
    });
  }
}
