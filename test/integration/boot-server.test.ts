// The site agent's boot server against a real control plane: it answers chain.ipxe, a 404
// script that exits for an unknown MAC, a 503 script that waits and reboots while the agent
// is not the active boot server (a standby), caps request headers at 8 KiB, and takes only
// well-formed query fields. Boot entries survive a restart of the store and lapse on their own.
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { BootEntryStore } from '../../agent/boot/entries';
import { machineQuery } from '../../agent/boot/http/ipxe-routes';
import type { SiteAgent } from '../../agent/site/main';
import { activeAgent, startBootSite, until, type BootSite } from '../helpers/boot-site';

let site: BootSite;
let active: SiteAgent;
let standby: SiteAgent;

beforeAll(async () => {
  site = await startBootSite('boot-server-site');
  active = await site.startAgent();
  await activeAgent(active);
  standby = await site.startAgent();
  await until('the standby to see the lease held by the other agent', () => standby.session.state().holderNodeId === active.identity.current.nodeId);
}, 90_000);

afterAll(async () => {
  await standby?.stop();
  await active?.stop();
  await site?.t.close();
});

function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

describe('boot server', () => {
  it('serves chain.ipxe, which chains to /boot/ipxe with the MAC, UUID and IP', async () => {
    const url = active.bootServer?.url as string;
    const { status, body } = await rawGet(`${url}/boot/chain.ipxe`);
    expect(status).toBe(200);
    expect(body.startsWith('#!ipxe\n')).toBe(true);
    expect(body).toContain(`chain ${url}/boot/ipxe?mac=\${net0/mac}&uuid=\${uuid}&ip=\${net0/ip}`);
  });

  it('answers an unknown MAC with a 404 script that exits', async () => {
    const { status, body } = await rawGet(`${active.bootServer?.url}/boot/ipxe?mac=02:00:00:00:00:99&uuid=4c4c4544-0042-3510-8052-b4c04f4e3732&ip=10.0.0.9`);
    expect(status).toBe(404);
    expect(body).toMatch(/^#!ipxe\n[\s\S]*\nexit\n$/);
    expect(body).not.toContain('kernel');
  });

  it('answers 503 with a wait-and-reboot script while the agent is not the active boot server', async () => {
    expect(standby.session.state().active).toBe(false);
    const { status, body } = await rawGet(`${standby.bootServer?.url}/boot/ipxe?mac=02:00:00:00:00:99`);
    expect(status).toBe(503);
    expect(body).toContain('sleep 10');
    expect(body).toContain('reboot');
  });

  it('caps request headers at 8 KiB', async () => {
    const ok = await rawGet(`${active.bootServer?.url}/boot/chain.ipxe`, { 'x-pad': 'a'.repeat(6 * 1024) });
    expect(ok.status).toBe(200);
    const big = await rawGet(`${active.bootServer?.url}/boot/chain.ipxe`, { 'x-pad': 'a'.repeat(9 * 1024) });
    expect(big.status).toBe(431);
  });

  it('serves only GET of its two paths', async () => {
    expect((await rawGet(`${active.bootServer?.url}/boot/files/../../etc/passwd`)).status).toBe(404);
    expect((await rawGet(`${active.bootServer?.url}/cache/abc`)).status).toBe(404);
  });

  it('takes only well-formed query fields', () => {
    const q = machineQuery(new URL('http://x/boot/ipxe?mac=AA-BB-CC-DD-EE-01&uuid=not-a-uuid&ip=10.0.0.300'));
    expect(q).toEqual({ mac: 'aa:bb:cc:dd:ee:01', uuid: null, ip: null });
    const long = machineQuery(new URL(`http://x/boot/ipxe?mac=${'a'.repeat(40)}&uuid=4C4C4544-0042-3510-8052-B4C04F4E3732&ip=fd00::1`));
    expect(long).toEqual({ mac: undefined, uuid: '4c4c4544-0042-3510-8052-b4c04f4e3732', ip: 'fd00::1' });
  });
});

describe('boot entry store', () => {
  const entry = (mac: string, notAfter: string, workflowId = 'node:n:deploying:1') => ({
    mac,
    productUuid: null,
    arch: 'X86_64_EFI' as const,
    nodeId: 'node_x',
    workflowId,
    tokenRef: 'sec_abc',
    notAfter,
  });

  it("keeps entries by MAC across a restart, drops lapsed ones, and removes a workflow's entries", async () => {
    const dir = mkdtempSync(path.join(inject('runDir'), 'boot-entries-'));
    const store = new BootEntryStore(dir);
    const soon = new Date(Date.now() + 300).toISOString();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    store.put([entry('02:00:00:00:00:01', later), entry('02:00:00:00:00:02', soon), entry('02:00:00:00:00:03', later, 'node:n:other:1')]);
    const reopened = new BootEntryStore(dir);
    expect(
      reopened
        .list()
        .map((e) => e.mac)
        .sort(),
    ).toEqual(['02:00:00:00:00:01', '02:00:00:00:00:02', '02:00:00:00:00:03']);
    await new Promise((r) => setTimeout(r, 400));
    expect(reopened.get('02:00:00:00:00:02')).toBeUndefined();
    expect(
      new BootEntryStore(dir)
        .list()
        .map((e) => e.mac)
        .sort(),
    ).toEqual(['02:00:00:00:00:01', '02:00:00:00:00:03']);
    expect(reopened.removeWorkflow('node:n:deploying:1').map((e) => e.mac)).toEqual(['02:00:00:00:00:01']);
    expect(new BootEntryStore(dir).list().map((e) => e.mac)).toEqual(['02:00:00:00:00:03']);
  });
});
