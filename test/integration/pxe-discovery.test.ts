// PXE discovery end to end (spec 001, "Discovering new machines"): a real site agent (proxy
// DHCP off, as the emulated sites run) lists iPXE script fetches from MACs without a boot
// entry, its heartbeat carries the list, the control plane stores it per agent by digest,
// and GET /v1/sites/:id/discovered merges the site's agents with the enrolled machine that
// has a MAC and the machine a MAC is the candidate of. Another tenant gets NOT_FOUND. The
// CLI prints the list and refuses a malformed MAC before sending anything.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../cli/api-client';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import type { SiteAgent } from '../../agent/site/main';
import { newId } from '../../services/ids';
import { recordDiscoveryReport } from '../../services/metal/discovery-store';
import type { DiscoveredMachine } from '../../core/schemas/discovery';
import { activeAgent, startBootSite, until, type BootSite } from '../helpers/boot-site';
import { runCli } from '../helpers/cli';

const unknownMac = '02:00:00:d1:00:01';
const enrolledMac = '02:00:00:d1:00:02';
const candidateMac = '02:00:00:d1:00:03';
const uuid = '4c4c4544-0042-3510-8052-b4c04f4e3732';

let site: BootSite;
let agent: SiteAgent;
let otherTenant: ApiClient;
let enrolledNodeId: string;
let candidateNodeId: string;

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

const discovered = async (tenantId = 'root') =>
  (await site.t.root.call<{ items: DiscoveredMachine[] }>('GET', `/v1/sites/${site.siteId}/discovered?tenantId=${tenantId}`)).items;

beforeAll(async () => {
  site = await startBootSite('pxe-discovery-site');
  agent = await site.startAgent();
  await activeAgent(agent);
  const { db } = site.t.cp;
  enrolledNodeId = newId('node');
  candidateNodeId = newId('node');
  await db.node.create({ data: { id: enrolledNodeId, tenantId: 'root', siteId: site.siteId, role: 'host', macs: [enrolledMac], power: 'off' } });
  await db.node.create({
    data: { id: candidateNodeId, tenantId: 'root', siteId: site.siteId, role: 'host', macs: [], productUuid: uuid, discoveredMac: candidateMac, power: 'off' },
  });
  await site.t.root.request('POST', '/v1/tenants', { id: 'other-co', name: 'Other Co' });
  const credential = await site.t.root.call<{ credential: string }>('POST', '/v1/credentials', {
    tenantId: 'other-co',
    name: 'other-co-read',
    permissions: ['compute:sites:read'],
  });
  otherTenant = site.t.root.withCredential(credential.credential);
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await site?.t.close();
});

describe('PXE discovery', () => {
  it('lists script fetches from MACs without a boot entry, reported by the heartbeat and merged per MAC', async () => {
    const base = agent.bootServer?.url as string;
    const chain = await get(`${base}/boot/chain.ipxe?mac=${unknownMac.toUpperCase()}&uuid=${uuid.toUpperCase()}&arch=x86_64_efi`);
    expect(chain.status).toBe(200);
    expect((await get(`${base}/boot/ipxe?mac=${unknownMac}`)).status).toBe(404);
    expect((await get(`${base}/boot/ipxe?mac=${enrolledMac}&arch=BAD%20ARCH`)).status).toBe(404);
    expect((await get(`${base}/boot/ipxe?mac=${candidateMac}&uuid=${uuid}`)).status).toBe(404);

    const items = await until('the heartbeat to report the three MACs', async () => {
      const list = await discovered();
      return list.length === 3 && list.find((m) => m.mac === unknownMac)?.count === 2 ? list : undefined;
    });
    const agentNodeId = agent.identity.current.nodeId;
    expect(items.find((m) => m.mac === unknownMac)).toEqual({
      mac: unknownMac,
      productUuid: uuid,
      arch: 'x86_64_efi',
      firstSeen: expect.any(String),
      lastSeen: expect.any(String),
      count: 2,
      relays: [],
      agentNodeIds: [agentNodeId],
    });
    expect(items.find((m) => m.mac === enrolledMac)).toMatchObject({ arch: 'unknown', productUuid: null, nodeId: enrolledNodeId });
    expect(items.find((m) => m.mac === enrolledMac)).not.toHaveProperty('candidateFor');
    expect(items.find((m) => m.mac === candidateMac)).toMatchObject({ productUuid: uuid, candidateFor: candidateNodeId });
    const lastSeens = items.map((m) => Date.parse(m.lastSeen));
    expect(lastSeens).toEqual([...lastSeens].sort((a, b) => b - a));

    // A second agent of the site saw the same MAC through a relay (and another MAC 25 h ago).
    const now = Date.now();
    const iso = (msAgo: number) => new Date(now - msAgo).toISOString();
    const secondAgent = newId('node');
    await recordDiscoveryReport(site.t.cp.db, {
      agentNodeId: secondAgent,
      siteId: site.siteId,
      entries: [
        { mac: unknownMac, productUuid: null, arch: 'x86_64_efi', firstSeen: iso(3_600_000), lastSeen: iso(60_000), count: 5, relay: '10.1.0.1' },
        { mac: '02:00:00:d1:00:09', productUuid: null, arch: 'bios', firstSeen: iso(26 * 3_600_000), lastSeen: iso(25 * 3_600_000), count: 1, relay: null },
      ],
    });
    const merged = await discovered();
    expect(merged.map((m) => m.mac).sort()).toEqual([unknownMac, enrolledMac, candidateMac].sort());
    const mergedUnknown = merged.find((m) => m.mac === unknownMac) as DiscoveredMachine;
    expect(mergedUnknown).toMatchObject({
      productUuid: uuid,
      count: 7,
      relays: ['10.1.0.1'],
      agentNodeIds: [agentNodeId, secondAgent].sort(),
      firstSeen: iso(3_600_000),
    });
    expect(mergedUnknown.lastSeen).toBe(items.find((m) => m.mac === unknownMac)?.lastSeen);
  });

  it("rewrites an agent's stored list only when it changed (its digest)", async () => {
    const { db } = site.t.cp;
    const agentNodeId = agent.identity.current.nodeId;
    const stored = await db.discoveryReport.findUniqueOrThrow({ where: { agentNodeId } });
    const heartbeatAfter = (ms: number) =>
      until('a heartbeat', async () => {
        const seenAt = (await db.agentSession.findUniqueOrThrow({ where: { nodeId: agentNodeId } })).lastSeenAt.getTime();
        return seenAt > ms ? seenAt : undefined;
      });
    // A heartbeat after the write carries the same list: nothing is written again. (The one
    // after it proves the first has finished: an agent's heartbeats are sequential.)
    await heartbeatAfter(await heartbeatAfter(stored.updatedAt.getTime()));
    expect((await db.discoveryReport.findUniqueOrThrow({ where: { agentNodeId } })).updatedAt).toEqual(stored.updatedAt);

    // A new sighting changes the list: written again with the next heartbeat.
    expect((await get(`${agent.bootServer?.url}/boot/ipxe?mac=${unknownMac}`)).status).toBe(404);
    await until('the changed list to be stored', async () => (await db.discoveryReport.findUniqueOrThrow({ where: { agentNodeId } })).digest !== stored.digest);
    expect((await db.discoveredMac.findUniqueOrThrow({ where: { agentNodeId_mac: { agentNodeId, mac: unknownMac } } })).count).toBe(3);
  });

  it('refuses a heartbeat whose list is too long or malformed, and keeps the stored list', async () => {
    const { db } = site.t.cp;
    const agentNodeId = agent.identity.current.nodeId;
    const before = await db.discoveryReport.findUniqueOrThrow({ where: { agentNodeId } });
    const client = new ControlPlaneClient(site.t.cp.url);
    const entry = {
      mac: unknownMac,
      productUuid: null,
      arch: 'bios',
      firstSeen: new Date().toISOString(),
      lastSeen: new Date().toISOString(),
      count: 1,
      relay: null,
    };
    const many = Array.from({ length: 257 }, (_, i) => ({
      ...entry,
      mac: `02:00:00:d2:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`,
    }));
    for (const discovered of [many, [{ ...entry, arch: 'x'.repeat(33) }], [{ ...entry, relay: 'relay.example' }]]) {
      await expect(client.signedPost(agent.identity, '/v1/agents/session', { discovered })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect((await db.discoveryReport.findUniqueOrThrow({ where: { agentNodeId } })).digest).toBe(before.digest);
  });

  it("is described in the OpenAPI document (metal.discovered and the heartbeat's list)", async () => {
    const doc = await site.t.anonymous.call<{
      paths: Record<
        string,
        Record<string, { summary?: string; responses?: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown> } }> }> }>
      >;
    }>('GET', '/docs/json');
    const route = doc.paths['/v1/sites/{siteId}/discovered']?.get;
    expect(route?.summary).toBe('metal.discovered');
    expect(Object.keys(route?.responses?.['200']?.content['application/json']?.schema.properties ?? {})).toEqual(['items']);
    expect(JSON.stringify(doc.paths['/v1/agents/session'])).toContain('discovered');
  });

  it('answers NOT_FOUND to a tenant that does not own the site', async () => {
    const foreign = await otherTenant.request('GET', `/v1/sites/${site.siteId}/discovered?tenantId=other-co`);
    expect(foreign.status).toBe(404);
    expect((foreign.body as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    const asOther = await otherTenant.request('GET', `/v1/sites/${site.siteId}/discovered?tenantId=root`);
    expect(asOther.status).toBe(403);
  });
});

describe('ironflow metal discovered / confirm-mac', () => {
  const env = () => ({ apiUrl: site.t.cp.url, credential: site.t.cp.rootCredential.bearer });

  it("prints the site's list as a table and as JSON", async () => {
    const table = await runCli(['metal', 'discovered', '--site', site.siteId], env());
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^MAC\s+PRODUCTUUID\s+ARCH\s+LASTSEEN\s+COUNT\s+NODE\s+CANDIDATEFOR/);
    expect(table.stdout).toMatch(new RegExp(`${candidateMac}\\s+${uuid}\\s+unknown\\s+\\S+\\s+1\\s+${candidateNodeId}`));
    const json = await runCli(['metal', 'discovered', '--site', site.siteId, '--format', 'json'], env());
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as DiscoveredMachine[]).find((m) => m.mac === enrolledMac)?.nodeId).toBe(enrolledNodeId);
  });

  it('refuses a malformed MAC with its flag name before anything is sent', async () => {
    // An API nobody listens on: a request would fail as unreachable, not as a usage error.
    const unreachable = { apiUrl: 'http://127.0.0.1:9', credential: '' };
    const bad = await runCli(['metal', 'confirm-mac', candidateNodeId, '--mac', '02:00:00:d1:00'], unreachable);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/INVALID_INPUT: --mac/);
    const good = await runCli(['metal', 'confirm-mac', candidateNodeId, '--mac', candidateMac], unreachable);
    expect(good.code).toBe(1);
    expect(good.stderr).not.toMatch(/INVALID_INPUT/);
  });

  it("sends confirm-mac to the node's route", async () => {
    const unknownNode = newId('node');
    const out = await runCli(['metal', 'confirm-mac', unknownNode, '--mac', candidateMac.toUpperCase()], env());
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(new RegExp(`NOT_FOUND.*${unknownNode}`));
  });
});
