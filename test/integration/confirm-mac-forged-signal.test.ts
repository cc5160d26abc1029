// A forged `macConfirmed` signal binds nothing (issue 13). Anyone who reaches Temporal can
// send it, so the workflow takes it as a wake-up only: the MAC is read back from what
// metal.confirmMac stored (an operator's decision, macSource operator), never from the signal.
// A step awaiting confirmMac keeps waiting after a forged one (a rejected signal in its status
// and a refusal event), goes on with the stored MAC after a real confirmation, and a later
// forged MAC changes nothing. Real control plane, worker and Temporal; no site agent runs, so
// the step waits for one once its MAC is confirmed.
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAC_CONFIRMED_SIGNAL } from '../../core/metal/confirm-mac-signal';
import { newId } from '../../services/ids';
import type { ProvisionStatus } from '../../core/plan';
import { until } from '../helpers/boot-site';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
let siteId: string;
let attackerConnection: Connection;
let attacker: Client;

beforeAll(async () => {
  t = await startTestControlPlane();
  siteId = (
    await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-mac-forged', idempotencyKey: 'mac-forged-site' })
  ).id;
  await t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id: 'await-confirm-mac',
      version: 1,
      target: 'metal',
      steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' }, await: 'confirmMac', timeout: '2m' }],
    },
  });
  // The attacker's own connection to the frontend, with no Ironflow code in between.
  attackerConnection = await Connection.connect({ address: t.config.temporal.address });
  attacker = new Client({ connection: attackerConnection, namespace: t.config.temporal.namespace });
}, 60_000);

afterAll(async () => {
  await attackerConnection?.close();
  await t?.close();
});

const status = (handle: WorkflowHandle) => handle.query<ProvisionStatus>('status');
const confirmActivities = async (handle: WorkflowHandle) =>
  ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskCompletedEventAttributes || e.activityTaskFailedEventAttributes).length;

describe('a forged macConfirmed signal', () => {
  it('binds no MAC: the waiting step goes on only with the MAC the control plane stored', async () => {
    // A machine found by PXE discovery: no MACs yet; its state workflow awaits the operator's confirmation.
    const nodeId = newId('node');
    await t.cp.db.node.create({
      data: { id: nodeId, tenantId: 'root', siteId, role: 'machine', provisionState: 'inspecting', bmcDriver: 'ipmi', bmcAddress: '10.0.45.1' },
    });
    const run = await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/await-confirm-mac/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'inspecting',
    });
    await t.cp.db.node.update({ where: { id: nodeId }, data: { workflowId: run.workflowId } });
    const handle = t.cp.temporal.workflow.getHandle(run.workflowId);
    await until('the confirmMac wait', async () => (await status(handle)).waitingFor?.startsWith('confirmMac'), 20_000);

    // Forged: the step keeps waiting, nothing is stored, the signal is listed as rejected and recorded.
    await attacker.workflow.getHandle(run.workflowId).signal(MAC_CONFIRMED_SIGNAL, 'aa:bb:cc:dd:ee:01');
    const rejected = await until(
      'the forged signal to be rejected',
      async () => {
        const s = await status(handle);
        return s.rejectedSignals.length === 1 ? s : undefined;
      },
      20_000,
    );
    expect(rejected.confirmedMac).toBeNull();
    expect(rejected.waitingFor).toMatch(/^confirmMac/);
    expect(rejected.rejectedSignals[0]?.reason).toMatch(/INVALID_STATE: .*confirms nothing/);
    expect((await t.cp.db.node.findUniqueOrThrow({ where: { id: nodeId } })).macs ?? []).toEqual([]);
    const refusal = await t.cp.db.event.findFirstOrThrow({ where: { type: 'node.pxe-mac.refused', subjectId: nodeId } });
    expect(refusal.data).toMatchObject({ code: 'INVALID_STATE', requestId: expect.stringMatching(/^wake:/) });

    // The operator confirms through the API: the step goes on with the stored MAC.
    await t.root.call('POST', `/v1/metal/nodes/${nodeId}/confirm-mac`, { tenantId: 'root', mac: 'B8-CE-F6-45-00-01' });
    const confirmed = await until(
      'the confirmed MAC to reach the workflow',
      async () => {
        const s = await status(handle);
        return s.confirmedMac ? s : undefined;
      },
      20_000,
    );
    expect(confirmed.confirmedMac).toBe('b8:ce:f6:45:00:01');

    // Another forged MAC afterwards: read back, the stored one stays.
    const before = await confirmActivities(handle);
    await attacker.workflow.getHandle(run.workflowId).signal(MAC_CONFIRMED_SIGNAL, 'aa:bb:cc:dd:ee:02');
    await until('the forged signal to be handled', async () => (await confirmActivities(handle)) > before, 20_000);
    expect((await status(handle)).confirmedMac).toBe('b8:ce:f6:45:00:01');
    expect((await t.cp.db.node.findUniqueOrThrow({ where: { id: nodeId } })).macs).toEqual(['b8:ce:f6:45:00:01']);
    await handle.terminate('test done');
  }, 90_000);
});
