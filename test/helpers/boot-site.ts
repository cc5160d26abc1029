// A site for boot-path tests: a control plane, a site, and a real site agent with its boot
// server, holding the boot lease; plus machines enrolled as node rows (BMC in the emulated
// fleet) and a provision run of a small profile against one.
import type { SiteAgent } from '../../agent/site/main';
import type { Fleet } from '../../agent/emulator/fleet';
import type { Machine } from '../../agent/emulator/machine';
import { newId } from '../../services/ids';
import { startTestControlPlane, type TestControlPlane } from './control-plane';
import { siteAgentFixture } from './site-agent';

export async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface BootSite {
  t: TestControlPlane;
  siteId: string;
  siteToken: string;
  startAgent(): Promise<SiteAgent>;
}

export async function startBootSite(key: string, cpOverrides?: Parameters<typeof startTestControlPlane>[0]): Promise<BootSite> {
  const t = await startTestControlPlane(cpOverrides);
  const site = await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-1', idempotencyKey: key });
  const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 600, maxUses: 4 });
  return {
    t,
    siteId: site.id,
    siteToken: minted.token,
    startAgent: () => siteAgentFixture(t.cp.url).start({ IRONFLOW_JOIN_TOKEN: minted.token }),
  };
}

/** Enrolls an emulated machine as a node row of the site (what metal.enroll plus inspection record). */
export async function enrollMachine(site: BootSite, machine: Machine, bmc: { address: string; username: string; password: string }): Promise<string> {
  const { db, secrets } = site.t.cp;
  const nodeId = newId('node');
  const d = machine.description;
  const bmcCredentialsRef = await secrets.put(db, {
    tenantId: 'root',
    purpose: 'bmc-credentials',
    value: JSON.stringify({ username: bmc.username, password: bmc.password }),
  });
  await db.node.create({
    data: {
      id: nodeId,
      tenantId: 'root',
      siteId: site.siteId,
      role: 'host',
      bmcDriver: 'redfish',
      bmcAddress: bmc.address,
      bmcCredentialsRef,
      macs: d.macs,
      productUuid: d.uuid,
      arch: d.arch,
      uefi: d.uefi,
      power: 'off',
    },
  });
  return nodeId;
}

export async function activeAgent(agent: SiteAgent): Promise<void> {
  await until('the site agent to hold the boot lease', () => agent.session.state().active, 30_000);
}

export type { Fleet };
