// GET /v1/metal/nodes and GET /v1/metal/nodes/:id through the real API and database: the rows
// are read with raw SQL (services/metal/node-reads.ts), so each answer is held against the
// view of the row Prisma's model query reads, and the list's filters and pages against the
// rows that should and should not be in them (other tenants', deleted, not metal).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metalView } from '../../core/metal/view';
import type { MetalNodeView } from '../../core/schemas/metal';
import { newId } from '../../services/ids';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
let siteId: string;
let otherSiteId: string;
let poolId: string;
/** The metal nodes of root in `poolId`, by id. */
let listed: string[];

const list = (query: string) => t.root.call<{ nodes: MetalNodeView[]; nextCursor: string | null }>('GET', `/v1/metal/nodes?tenantId=root&${query}`);

async function modelView(nodeId: string): Promise<MetalNodeView> {
  return metalView(await t.cp.db.node.findUniqueOrThrow({ where: { id: nodeId } }));
}

beforeAll(async () => {
  t = await startTestControlPlane();
  const db = t.cp.db;
  await t.root.call('POST', '/v1/tenants', { id: 'listco', name: 'List Co' });
  const site = (region: string) =>
    db.site.create({
      data: { id: newId('site'), ownerTenantId: 'root', kind: 'shared', region, callerId: 'test', idempotencyKey: region, requestHash: region },
    });
  siteId = (await site('list-a')).id;
  otherSiteId = (await site('list-b')).id;
  poolId = newId('pool');
  await db.pool.create({ data: { id: poolId, tenantId: 'root', siteId, class: 'list', policy: {} } });
  const node = (id: string, data: Record<string, unknown> = {}) =>
    db.node.create({ data: { id, tenantId: 'root', siteId, poolId, role: 'machine', provisionState: 'ready', power: 'off', ...data } });
  listed = [newId('node'), newId('node'), newId('node'), newId('node')].sort();
  await node(listed[0]!, {
    provisionState: 'deployed',
    maintenance: true,
    maintenanceReason: 'disk',
    maintenanceSource: 'operator',
    bmcDriver: 'redfish',
    bmcAddress: 'https://10.0.0.1',
    bmcCredentialsRef: 'sec_x',
    macs: ['52:54:00:aa:00:01'],
    macSource: 'operator',
    labels: { rack: 'r1', tier: 'gold' },
    deployProfile: { id: 'prof_x', version: 3 },
    lastError: { code: 'BMC_UNREACHABLE', message: 'no route' },
    driverBindings: { power: { driver: 'redfish', config: { port: '443' } } },
    uefi: false,
    version: 7,
  });
  await node(listed[1]!);
  await node(listed[2]!, { provisionState: 'deployed' });
  await node(listed[3]!, { siteId: otherSiteId });
  // Never listed: deleted, not a metal node, another tenant's.
  await node(newId('node'), { deletedAt: new Date() });
  await node(newId('node'), { provisionState: null, role: 'site' });
  await db.node.create({ data: { id: newId('node'), tenantId: 'listco', siteId, role: 'machine', provisionState: 'ready' } });
});

afterAll(async () => {
  await t?.close();
});

describe('metal node reads', () => {
  it('answers one node as the view of the row the model query reads, and 404 for a deleted or foreign one', async () => {
    for (const id of listed) {
      expect(await t.root.call<MetalNodeView>('GET', `/v1/metal/nodes/${id}?tenantId=root`)).toEqual(await modelView(id));
    }
    const deleted = await t.cp.db.node.findFirstOrThrow({ where: { tenantId: 'root', deletedAt: { not: null } } });
    expect((await t.root.request('GET', `/v1/metal/nodes/${deleted.id}?tenantId=root`)).status).toBe(404);
    expect((await t.root.request('GET', `/v1/metal/nodes/${listed[0]}?tenantId=listco`)).status).toBe(404);
  });

  it("lists the tenant's live metal nodes by id, filtered by pool, site and state", async () => {
    const all = await list(`poolId=${poolId}`);
    expect(all).toEqual({ nodes: await Promise.all(listed.map(modelView)), nextCursor: null });
    expect((await list(`siteId=${otherSiteId}`)).nodes.map((n) => n.nodeId)).toEqual([listed[3]]);
    expect((await list(`poolId=${poolId}&state=deployed`)).nodes.map((n) => n.nodeId)).toEqual([listed[0], listed[2]]);
    expect((await list(`poolId=${poolId}&siteId=${siteId}&state=ready`)).nodes.map((n) => n.nodeId)).toEqual([listed[1]]);
  });

  it('pages by cursor: each page ends with the next cursor until the last', async () => {
    const first = await list(`poolId=${poolId}&limit=3`);
    expect(first.nodes.map((n) => n.nodeId)).toEqual(listed.slice(0, 3));
    expect(first.nextCursor).toBe(listed[2]);
    const second = await list(`poolId=${poolId}&limit=3&cursor=${first.nextCursor}`);
    expect(second).toEqual({ nodes: [await modelView(listed[3]!)], nextCursor: null });
  });
});
