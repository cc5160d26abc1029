// The rendered user data, to the ramdisk of the node it was rendered for: only a `ramdisk`
// agent whose certificate is that node's, only while the deploy workflow that rendered it
// runs (asked of Temporal), and only that workflow's document. Each grant or refusal is a
// security event naming the reference, never the document (it holds a join token).
import type { Client } from '@temporalio/client';
import { workflowRunsFor } from '../bmc-access';
import type { Db } from '../db';
import { appendEvent } from '../events';
import { recordRefusal, refusal } from '../joins/refusal';
import type { AuthenticatedAgent } from '../pki/authenticate-agent';
import type { UserDataAnswer, UserDataRequest } from '../../core/schemas/agent-user-data';
import type { SecretStore } from '../secret-store';

export interface UserDataGrantDeps {
  db: Db;
  temporal: Client;
  secrets: SecretStore;
}

/** Where userdata.render seals a workflow's document (activities/deploy-image.ts and activities/revoke-identity.ts uses the same). */
export const userDataSecretPurpose = (workflowId: string): string => `userdata:${workflowId}`;

export async function grantUserData(deps: UserDataGrantDeps, agent: AuthenticatedAgent, input: UserDataRequest): Promise<UserDataAnswer> {
  const subject = { nodeId: input.nodeId, workflowId: input.workflowId, ref: input.ref, agentNodeId: agent.nodeId, serial: agent.serial };
  try {
    if (agent.role !== 'ramdisk')
      throw refusal('PERMISSION_DENIED', 'not-a-ramdisk', `only a machine's ramdisk fetches its user data; ${agent.nodeId} is a ${agent.role} agent`);
    if (agent.nodeId !== input.nodeId)
      throw refusal('PERMISSION_DENIED', 'another-node', `a ramdisk fetches only its own node's user data, not node ${input.nodeId}'s`);
    if (!(await workflowRunsFor(deps.temporal, input.workflowId, input.nodeId))) {
      throw refusal(
        'PERMISSION_DENIED',
        'workflow-not-running',
        `workflow ${input.workflowId} is not a running workflow of node ${input.nodeId}; user data is handed out only during its deploy`,
      );
    }
    const stored = await deps.db.secret.findUnique({ where: { id: input.ref } });
    if (!stored || stored.purpose !== userDataSecretPurpose(input.workflowId) || stored.tenantId !== agent.tenantId) {
      throw refusal('NOT_FOUND', 'user-data-unknown', `${input.ref} is not the user data of workflow ${input.workflowId}`);
    }
    const document = await deps.secrets.get(deps.db, stored.id);
    // Ignition documents are JSON; cloud-init's start with #cloud-config (both shipped templates).
    const kind = document.trimStart().startsWith('{') ? 'ignition' : 'cloud-init';
    await appendEvent(deps.db, { tenantId: agent.tenantId, type: 'security.userdata.granted', subjectId: input.nodeId, data: { ...subject, kind } });
    return { kind, document };
  } catch (error) {
    return recordRefusal(deps.db, 'security.userdata.refused', error, { tenantId: agent.tenantId, subjectId: input.nodeId, data: subject });
  }
}
