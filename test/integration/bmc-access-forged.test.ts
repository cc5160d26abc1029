// A step's secrets only for workflows the control plane started (issue 13): an attacker who
// reaches Temporal starts a workflow naming a machine (its NodeId, its `node:<id>:` id form),
// or a new run under the id of a finished genuine one, and the site agent's signed request
// for that workflow is refused PERMISSION_DENIED with a security event that holds no secret.
// The genuine doors stay open: a run the control plane started (POST /v1/profiles/:id/runs)
// and the node's running state workflow (the node row names it). A ramdisk's user data (its
// join token inside) follows the same rule. No worker runs, so every
// workflow stays running with its first task unpicked.
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import type { IronflowError } from '../../core/errors';
import { recordCertificate } from '../../core/joins/record-certificate';
import { loadOrCreateNodeCa } from '../../services/pki/node-ca';
import { searchAttributeKeys } from '../../core/search-attributes';
import { userDataSecretPurpose } from '../../services/userdata/grant';
import { RECENTLY_RUNNING_MS } from '../../services/temporal/recent-runs';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { newKeyAndCsr, workDir } from '../helpers/openssl';
import { seedMachineWithBmc } from '../helpers/machine-with-bmc';

const BMC_PASSWORD = 'forged-bmc-pw-7f3a';

let t: TestControlPlane;
let siteId: string;
let attacker: Client;
let attackerConnection: Connection;
let signer: { key: ReturnType<typeof createPrivateKey>; certificatePem: () => string };
let agentNodeId: string;
const client = () => new ControlPlaneClient(t.cp.url);

beforeAll(async () => {
  t = await startTestControlPlane({ worker: false });
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-forged', idempotencyKey: 'forged-site' }))
    .id;
  const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
  const dir = workDir();
  const csr = newKeyAndCsr(dir, 'site', 'ec');
  const joined = await t.anonymous.call<{ nodeId: string; certificateChain: string[] }>('POST', '/v1/join', { token: minted.token, csr });
  agentNodeId = joined.nodeId;
  const certificate = joined.certificateChain[0] as string;
  signer = { key: createPrivateKey({ key: readFileSync(path.join(dir, 'site.key')) }), certificatePem: () => certificate };
  // The attacker's own connection to the frontend, with no Ironflow code in between.
  attackerConnection = await Connection.connect({ address: t.config.temporal.address });
  attacker = new Client({ connection: attackerConnection, namespace: t.config.temporal.namespace });
  await t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: { id: 'forged-test-power', version: 1, target: 'metal', steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' } }] },
  });
}, 60_000);

afterAll(async () => {
  await attackerConnection?.close();
  await t?.close();
});

const machine = (): Promise<string> => seedMachineWithBmc(t.cp, siteId, { address: 'https://10.0.14.1', username: 'admin', password: BMC_PASSWORD });

/** A workflow started straight through Temporal, naming the machine as the control plane would. */
async function forge(nodeId: string, workflowId: string): Promise<void> {
  await attacker.workflow.start('provision', {
    workflowId,
    taskQueue: `attacker.${nodeId}`,
    args: [{}, { nodeId }],
    typedSearchAttributes: [{ key: searchAttributeKeys.NodeId, value: nodeId }],
  });
}

/** `runId`: the step's run, as a site agent's activity names it (agent/common/step-scope.ts). */
const ask = (route: string, nodeId: string, workflowId: string, runId?: string) =>
  client()
    .signedPost<{ password?: string }>(signer, route, { nodeId, workflowId, ...(runId ? { runId } : {}) })
    .then(
      (answer) => ({ granted: true as const, answer }),
      (error: IronflowError) => ({ granted: false as const, code: error.code, reason: error.details.reason }),
    );

const refusals = async (nodeId: string) =>
  t.cp.db.event.findMany({
    where: { type: { in: ['security.bmc-access.refused', 'security.proxy-targets.refused'] }, subjectId: nodeId },
    orderBy: { seq: 'asc' },
  });

describe('a step secret for a forged workflow', () => {
  it('refuses the BMC access and the proxy targets for a workflow the control plane did not start', async () => {
    const nodeId = await machine();
    const workflowId = `node:${nodeId}:inspecting:7`;
    await forge(nodeId, workflowId);
    expect((await attacker.workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');

    expect(await ask('/v1/agents/bmc-access', nodeId, workflowId)).toEqual({ granted: false, code: 'PERMISSION_DENIED', reason: 'workflow-unknown' });
    expect(await ask('/v1/agents/proxy-targets', nodeId, workflowId)).toMatchObject({ granted: false, code: 'PERMISSION_DENIED', reason: 'workflow-unknown' });
    const events = await refusals(nodeId);
    expect(events.map((e) => [e.type, (e.data as { reason: string }).reason])).toEqual([
      ['security.bmc-access.refused', 'workflow-unknown'],
      ['security.proxy-targets.refused', 'workflow-unknown'],
    ]);
    expect(events[0]?.data).toMatchObject({ nodeId, workflowId, agentNodeId, code: 'PERMISSION_DENIED' });
    expect(JSON.stringify(events)).not.toContain(BMC_PASSWORD);
    expect(await t.cp.db.event.count({ where: { type: 'security.bmc-access.granted', subjectId: nodeId } })).toBe(0);
  }, 30_000);

  it('grants a run the control plane started, and refuses a new run forged under its id once it ended', async () => {
    const nodeId = await machine();
    const started = await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/forged-test-power/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'inspecting',
    });
    const granted = await ask('/v1/agents/bmc-access', nodeId, started.workflowId);
    expect(granted).toMatchObject({ granted: true, answer: { password: BMC_PASSWORD } });
    expect((await t.cp.db.event.findFirstOrThrow({ where: { type: 'security.bmc-access.granted', subjectId: nodeId } })).data).toMatchObject({
      workflowId: started.workflowId,
      agentNodeId,
    });

    // The genuine run ends; the attacker reuses its id for a run of its own.
    await attacker.workflow.getHandle(started.workflowId).terminate('forged test');
    await forge(nodeId, started.workflowId);
    expect(await ask('/v1/agents/bmc-access', nodeId, started.workflowId)).toEqual({ granted: false, code: 'PERMISSION_DENIED', reason: 'workflow-unknown' });
  }, 30_000);

  it('with the step naming its run: grants that run, and refuses the run forged under its id, named or not', async () => {
    const nodeId = await machine();
    const started = await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/forged-test-power/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'inspecting',
    });
    const genuine = await t.cp.temporal.workflow.getHandle(started.workflowId).describe();
    // Asked twice within a second, as a BMC command's requests do: the second reuses Temporal's answer for this run.
    expect(await ask('/v1/agents/bmc-access', nodeId, started.workflowId, genuine.runId)).toMatchObject({ granted: true });
    expect(await ask('/v1/agents/bmc-access', nodeId, started.workflowId, genuine.runId)).toMatchObject({ granted: true });

    await attacker.workflow.getHandle(started.workflowId).terminate('forged test');
    await forge(nodeId, started.workflowId);
    const forged = (await t.cp.temporal.workflow.getHandle(started.workflowId).describe()).runId;
    expect(await ask('/v1/agents/bmc-access', nodeId, started.workflowId, forged)).toEqual({
      granted: false,
      code: 'PERMISSION_DENIED',
      reason: 'workflow-unknown',
    });
    expect(await ask('/v1/agents/bmc-access', nodeId, started.workflowId)).toEqual({ granted: false, code: 'PERMISSION_DENIED', reason: 'workflow-unknown' });
    // The ended genuine run is refused once Temporal's last answer about it is older than RECENTLY_RUNNING_MS.
    await new Promise((resolve) => setTimeout(resolve, RECENTLY_RUNNING_MS + 100));
    expect(await ask('/v1/agents/bmc-access', nodeId, started.workflowId, genuine.runId)).toEqual({
      granted: false,
      code: 'PERMISSION_DENIED',
      reason: 'workflow-not-running',
    });
    await attacker.workflow.getHandle(started.workflowId).terminate('test done');
  }, 30_000);

  it('grants the running state workflow the node row names', async () => {
    const nodeId = await machine();
    const workflowId = `node:${nodeId}:inspecting:1`;
    // What the lifecycle does: the row names the state workflow, then it starts.
    await t.cp.db.node.update({ where: { id: nodeId }, data: { workflowId, workflowSeq: 1 } });
    await t.cp.temporal.workflow.start('provision', {
      workflowId,
      taskQueue: t.config.controlQueue,
      args: [{}, { nodeId }],
      typedSearchAttributes: [{ key: searchAttributeKeys.NodeId, value: nodeId }],
    });
    expect(await ask('/v1/agents/bmc-access', nodeId, workflowId)).toMatchObject({ granted: true, answer: { password: BMC_PASSWORD } });
    // Another running workflow of the same machine, not the one the row names, is refused.
    const other = `node:${nodeId}:inspecting:2`;
    await forge(nodeId, other);
    expect(await ask('/v1/agents/bmc-access', nodeId, other)).toMatchObject({ granted: false, code: 'PERMISSION_DENIED', reason: 'workflow-unknown' });
    await t.cp.temporal.workflow.getHandle(workflowId).terminate('test done');
    await t.cp.temporal.workflow.getHandle(other).terminate('test done');
  }, 30_000);

  it("refuses a ramdisk its user data for a forged workflow, and hands it out for the node's state workflow", async () => {
    const nodeId = await machine();
    // The machine's ramdisk: a certificate of the node CA, on record, as a join would issue it.
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ca = await loadOrCreateNodeCa(t.cp.db, t.cp.secrets, t.config.dataDir);
    const issued = await t.cp.db.$transaction((tx) =>
      recordCertificate(tx, ca, new Uint8Array(keys.publicKey.export({ type: 'spki', format: 'der' })), { nodeId, role: 'ramdisk', siteId }, 600, new Date()),
    );
    const ramdisk = { key: keys.privateKey, certificatePem: () => issued.pem };
    const fetchUserData = async (workflowId: string) => {
      const ref = await t.cp.secrets.put(t.cp.db, { tenantId: 'root', purpose: userDataSecretPurpose(workflowId), value: '#cloud-config\nhostname: forged\n' });
      return client()
        .signedPost<{ document: string }>(ramdisk, '/v1/agents/user-data', { nodeId, workflowId, ref })
        .then(
          (answer) => ({ granted: true as const, answer }),
          (error: IronflowError) => ({ granted: false as const, code: error.code, reason: error.details.reason }),
        );
    };

    const forged = `node:${nodeId}:deploying:3`;
    await forge(nodeId, forged);
    expect(await fetchUserData(forged)).toEqual({ granted: false, code: 'PERMISSION_DENIED', reason: 'workflow-unknown' });
    const refused = await t.cp.db.event.findFirstOrThrow({ where: { type: 'security.userdata.refused', subjectId: nodeId } });
    expect(refused.data).toMatchObject({ nodeId, workflowId: forged, reason: 'workflow-unknown' });

    const genuine = `node:${nodeId}:deploying:1`;
    await t.cp.db.node.update({ where: { id: nodeId }, data: { provisionState: 'deploying', workflowId: genuine, workflowSeq: 1 } });
    await t.cp.temporal.workflow.start('provision', {
      workflowId: genuine,
      taskQueue: t.config.controlQueue,
      args: [{}, { nodeId }],
      typedSearchAttributes: [{ key: searchAttributeKeys.NodeId, value: nodeId }],
    });
    expect(await fetchUserData(genuine)).toMatchObject({ granted: true, answer: { document: '#cloud-config\nhostname: forged\n' } });
    for (const id of [forged, genuine]) await t.cp.temporal.workflow.getHandle(id).terminate('test done');
  }, 30_000);
});
