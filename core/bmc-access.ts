// Granting a site agent a machine's BMC access for one workflow step: only to a site
// agent of the machine's own site, only while a workflow of that machine runs (asked of
// Temporal, not of the caller), and each grant or refusal is a security event that names
// who, which machine and which workflow, never the credential.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Db } from './db';
import { IronflowError, parseWith } from './errors';
import { appendEvent } from './events';
import { recordRefusal, refusal } from './joins/refusal';
import type { AuthenticatedAgent } from './pki/authenticate-agent';
import { bmcCredentialsSchema, type BmcAccess, type BmcAccessRequest } from './schemas/agent-bmc-access';
import { bmcDriverNames } from './schemas/bmc';
import { searchAttributeKeys } from './search-attributes';
import type { SecretStore } from './secret-store';

export interface BmcAccessDeps {
  db: Db;
  temporal: Client;
  secrets: SecretStore;
}

/** Whether the workflow runs now and is about this machine (its NodeId search attribute, or its id). */
export async function workflowRunsFor(temporal: Client, workflowId: string, nodeId: string): Promise<boolean> {
  let description;
  try {
    description = await temporal.workflow.getHandle(workflowId).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
  if (description.status.name !== 'RUNNING') return false;
  const attributeNode = description.typedSearchAttributes.get(searchAttributeKeys.NodeId);
  return attributeNode === nodeId || (attributeNode === undefined && workflowId.startsWith(`node:${nodeId}:`));
}

/**
 * The machine a site agent's running step is about, or a refusal: a site agent of the
 * machine's own site, and a workflow of that machine that runs now.
 */
export async function machineOfRunningStep(deps: BmcAccessDeps, agent: AuthenticatedAgent, input: BmcAccessRequest) {
  if (agent.role !== 'site' || !agent.siteId) throw refusal('PERMISSION_DENIED', 'not-a-site-agent', `only site agents act for machines' steps; ${agent.nodeId} is a ${agent.role} agent`);
  const node = await deps.db.node.findUnique({ where: { id: input.nodeId } });
  // Another site's machine is NOT_FOUND: an agent learns nothing about other sites.
  if (!node || node.deletedAt || node.siteId !== agent.siteId) throw refusal('NOT_FOUND', 'node-not-at-site', `node ${input.nodeId} not found at site ${agent.siteId}`);
  if (!(await workflowRunsFor(deps.temporal, input.workflowId, node.id))) {
    throw refusal('PERMISSION_DENIED', 'workflow-not-running', `workflow ${input.workflowId} is not a running workflow of node ${node.id}; access is granted only for a running step`);
  }
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
      if (error instanceof IronflowError && error.code === 'NOT_FOUND') throw refusal('INVALID_STATE', 'bmc-credentials-missing', `the BMC credentials of node ${node.id} are gone; set them again`);
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
    return recordRefusal(deps.db, 'security.bmc-access.refused', error, { tenantId: await refusalTenant(deps.db, agent, input.nodeId), subjectId: input.nodeId, data: { ...subject, siteId: agent.siteId } });
  }
}
