// metal.confirmMac's doors and refusals through the real API, database and Temporal dev
// server: the REST route with and without a running workflow, and the `confirmMac` Update of
// node:<id>, which answers the same refusals (services/metal/confirm-mac.ts is their one path).
// No site agent runs, so each enrolled node's first step waits: its workflows are running.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MetalNodeView } from '../../core/schemas/metal';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
let poolId: string;
let serial = 0;

type Refusal = { error: { code: string; details?: Record<string, unknown> } };

async function enroll(macs?: string[]): Promise<MetalNodeView> {
  serial += 1;
  const uuid = `4c4c4544-0000-1000-8000-${String(serial).padStart(12, '0')}`;
  return t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
    tenantId: 'root',
    poolId,
    productUuid: uuid,
    bmc: { driver: 'ipmi', address: `10.0.44.${serial}`, username: 'admin', password: 'confirm-mac-bmc' },
    ...(macs ? { macs } : {}),
  });
}
const confirm = (nodeId: string, mac: string, tenantId = 'root') =>
  t.root.request<MetalNodeView & Refusal>('POST', `/v1/metal/nodes/${nodeId}/confirm-mac`, { tenantId, mac });
const confirmedEvents = async (nodeId: string) =>
  (await t.cp.db.event.findMany({ where: { type: 'node.pxe-mac.confirmed', subjectId: nodeId } })).map((e) => e.data);

beforeAll(async () => {
  t = await startTestControlPlane();
  await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  const siteId = (
    await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-confirm', idempotencyKey: 'confirm-site' })
  ).id;
  poolId = (await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'metal-confirm' })).id;
});

afterAll(async () => {
  await t?.close();
});

describe('metal.confirmMac', () => {
  it('the REST route stores the MAC with macSource operator and an event, and refuses a second, a taken MAC and another tenant', async () => {
    const holder = await enroll(['b8:ce:f6:44:00:01']);
    expect(holder.macSource).toBe('operator');
    const node = await enroll();
    expect(node).toMatchObject({ macs: [], macSource: null });

    expect(await confirm(node.nodeId, 'B8-CE-F6-44-00-01')).toMatchObject({
      status: 409,
      body: { error: { code: 'CONFLICT', details: { path: 'mac', nodeId: holder.nodeId } } },
    });
    expect(await confirm(node.nodeId, 'b8:ce:f6:44:00:02', 'acme')).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect((await t.root.call<MetalNodeView>('GET', `/v1/metal/nodes/${node.nodeId}?tenantId=root`)).macs).toEqual([]);

    const done = await confirm(node.nodeId, 'b8:ce:f6:44:00:02');
    expect(done).toMatchObject({ status: 200, body: { macs: ['b8:ce:f6:44:00:02'], macSource: 'operator', discoveredMac: null } });
    expect(await confirmedEvents(node.nodeId)).toEqual([{ nodeId: node.nodeId, mac: 'b8:ce:f6:44:00:02', discovered: false, requestId: expect.any(String) }]);
    expect(await confirm(node.nodeId, 'b8:ce:f6:44:00:03')).toMatchObject({ status: 409, body: { error: { code: 'INVALID_STATE' } } });
  });

  it('works with no workflow running, and refuses a retired node', async () => {
    const resting = await enroll();
    await t.cp.db.node.update({ where: { id: resting.nodeId }, data: { provisionState: 'manageable', workflowId: null } });
    expect(await confirm(resting.nodeId, 'b8:ce:f6:44:00:10')).toMatchObject({ status: 200, body: { macs: ['b8:ce:f6:44:00:10'], macSource: 'operator' } });

    const retired = await enroll();
    await t.cp.db.node.update({ where: { id: retired.nodeId }, data: { provisionState: 'retired', workflowId: null } });
    expect(await confirm(retired.nodeId, 'b8:ce:f6:44:00:11')).toMatchObject({ status: 409, body: { error: { code: 'INVALID_STATE' } } });
  });

  it('the confirmMac Update of node:<id> answers the same refusals and stores the same way', async () => {
    const node = await enroll();
    const handle = t.cp.temporal.workflow.getHandle(`node:${node.nodeId}`);
    const refusal = async (mac: string) => {
      const err = await handle.executeUpdate('confirmMac', { args: [mac] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
      return (err as WorkflowUpdateFailedError).cause as { type?: string; message: string };
    };
    expect(await refusal('not-a-mac')).toMatchObject({ type: 'INVALID_INPUT' });
    expect(await refusal('b8:ce:f6:44:00:01')).toMatchObject({ type: 'CONFLICT', message: expect.stringContaining('belongs to node') });
    expect(await handle.executeUpdate('confirmMac', { args: ['b8:ce:f6:44:00:20'] })).toBe('b8:ce:f6:44:00:20');
    expect(await t.root.call<MetalNodeView>('GET', `/v1/metal/nodes/${node.nodeId}?tenantId=root`)).toMatchObject({
      macs: ['b8:ce:f6:44:00:20'],
      macSource: 'operator',
    });
    expect(await confirmedEvents(node.nodeId)).toEqual([
      expect.objectContaining({ mac: 'b8:ce:f6:44:00:20', requestId: expect.stringMatching(/^update:node:/) }),
    ]);
    expect(await refusal('b8:ce:f6:44:00:21')).toMatchObject({ type: 'INVALID_STATE' });
  });
});
