// The metal verbs nothing else drives through the API: power (on, off, cycle), retire and the
// metal.revokeIdentity step it ends with, and maintenance (an operator's and a failure's),
// with lastError cleared by the next successful move. A real control plane, worker and
// Temporal; a real site agent running the BMC commands against emulated Redfish BMCs. The
// pool is agentless (agent: none), so its shipped profiles are out of band only and every
// effect is at the BMC: its command log is the evidence.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SiteAgent } from '../../agent/site/main';
import { RedfishBmcHost } from '../../agent/emulator/redfish-bmc';
import type { MetalNodeView } from '../../core/schemas/metal';
import { activeAgent, startBootSite, until, type BootSite } from '../helpers/boot-site';
import { runCli } from '../helpers/cli';

type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };

let site: BootSite;
let agent: SiteAgent;
let bmc: RedfishBmcHost;
let poolId: string;
let sequence = 0;

beforeAll(async () => {
  site = await startBootSite('metal-verbs-api');
  agent = await site.startAgent();
  await activeAgent(agent);
  bmc = await RedfishBmcHost.start();
  poolId = (
    await site.t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId: site.siteId, class: 'oob-verbs', policy: { agent: 'none' } })
  ).id;
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await bmc?.close();
  await site?.t.close();
});

const api = () => site.t.root;
const get = (nodeId: string) => api().call<MetalNodeView>('GET', `/v1/metal/nodes/${nodeId}?tenantId=root`);
const verb = (nodeId: string, name: string, body: Record<string, unknown> = {}) =>
  api().call<MetalNodeView>('POST', `/v1/metal/nodes/${nodeId}/${name}`, { tenantId: 'root', ...body });
const refused = async (nodeId: string, name: string, body: Record<string, unknown> = {}): Promise<ErrorBody['error']> => {
  const response = await api().request<ErrorBody>('POST', `/v1/metal/nodes/${nodeId}/${name}`, { tenantId: 'root', ...body });
  expect(response.status, `${name} should be refused`).toBe(409);
  return response.body.error;
};
const settle = (nodeId: string, state: string, timeoutMs = 60_000) =>
  until(
    `${nodeId} to rest in ${state}`,
    async () => {
      const node = await get(nodeId);
      return node.provisionState === state && node.workflowId === null ? node : undefined;
    },
    timeoutMs,
  );
const events = async (nodeId: string, type: string) =>
  (await site.t.cp.db.event.findMany({ where: { subjectId: nodeId, type }, orderBy: { seq: 'asc' } })).map((e) => e.data as Record<string, unknown>);

/** An emulated BMC machine, and a node enrolled by it through the API (not yet settled). */
async function enroll(options: { bmcPresent?: boolean } = {}): Promise<{ nodeId: string; machineId: string; add: () => void }> {
  sequence += 1;
  const machineId = `v${sequence}`;
  const spec = {
    id: machineId,
    uuid: randomUUID(),
    macs: [`02:00:00:77:00:${sequence.toString(16).padStart(2, '0')}`],
    username: 'admin',
    password: randomBytes(9).toString('base64url'),
    powerState: 'Off' as const,
    defaultBoot: 'disk' as const,
  };
  const add = () => void bmc.add(spec);
  if (options.bmcPresent !== false) add();
  const node = await api().call<MetalNodeView>('POST', '/v1/metal/nodes', {
    tenantId: 'root',
    poolId,
    bmc: { driver: 'redfish', address: `${bmc.url}/redfish/v1/Systems/${machineId}`, username: spec.username, password: spec.password },
  });
  return { nodeId: node.nodeId, machineId, add };
}
const commands = (machineId: string) => bmc.get(machineId)?.commands ?? [];
/** The power resets the BMC carried out since `before` commands. */
const resetsSince = (machineId: string, before: number) =>
  commands(machineId)
    .slice(before)
    .filter((c) => c.startsWith('reset:'));
type PowerAnswer = MetalNodeView & { powerWorkflowId: string };
const power = (nodeId: string, action: string) => api().call<PowerAnswer>('POST', `/v1/metal/nodes/${nodeId}/power`, { tenantId: 'root', action });
const powerRunEnded = (answer: { powerWorkflowId: string }) => site.t.cp.temporal.workflow.getHandle(answer.powerWorkflowId).result();

/** Puts a node row in `state` (what the lifecycle would have left), without waking anything. */
const putInState = (nodeId: string, state: string) =>
  site.t.cp.db.node.update({
    where: { id: nodeId },
    data: {
      provisionState: state,
      provisionPhase: state === 'rescue' ? 'booted' : null,
      workflowId: null,
      failedFrom: state === 'failed' ? 'enrolling' : null,
    },
  });

describe('metal power through the API', () => {
  it('on, off and cycle go through the site agent to the BMC; the node records the power asked', async () => {
    const { nodeId, machineId } = await enroll();
    await settle(nodeId, 'ready');
    const before = commands(machineId).length;
    const run = async (action: string) => {
      const answer = await power(nodeId, action);
      expect(answer.provisionState).toBe('ready'); // the power axis only
      await powerRunEnded(answer);
      return answer;
    };
    expect((await run('on')).power).toBe('on');
    expect(bmc.get(machineId)?.powerState).toBe('On');
    expect((await run('off')).power).toBe('off');
    expect(bmc.get(machineId)?.powerState).toBe('Off');
    expect((await run('cycle')).power).toBe('on');
    expect(bmc.get(machineId)?.powerState).toBe('On');
    expect(resetsSince(machineId, before)).toEqual(['reset:On', 'reset:ForceOff', 'reset:PowerCycle']);
    await until('the power events', async () => (await events(nodeId, 'node.power.requested')).length === 3 || undefined);
    expect((await events(nodeId, 'node.power.requested')).map((e) => e.action)).toEqual(['on', 'off', 'cycle']);
  }, 90_000);

  it('runs one power action at a time: another power action or a state verb while it runs is CONFLICT naming it and changes nothing; accepted once it ended', async () => {
    const { nodeId, machineId } = await enroll();
    await settle(nodeId, 'ready');
    const before = commands(machineId).length;
    // A slow BMC keeps the first run going while the second is asked for.
    bmc.setFaults(machineId, { latencyMs: 1_500 });
    const first = await power(nodeId, 'on');
    const busy = await refused(nodeId, 'power', { action: 'off' });
    expect(busy.code).toBe('CONFLICT');
    expect(busy.message).toContain(`still carrying out a power action (workflow ${first.powerWorkflowId})`);
    expect(busy.details).toMatchObject({ workflowId: first.powerWorkflowId });
    // Nor does a state verb start a workflow that drives the power beside it.
    const provide = await refused(nodeId, 'provide');
    expect(provide.code).toBe('CONFLICT');
    expect(provide.message).toContain(`(workflow ${first.powerWorkflowId}); provide again once it has ended`);
    // The refused requests recorded nothing: the node still asks for on, and rests ready.
    expect(await get(nodeId)).toMatchObject({ power: 'on', provisionState: 'ready' });
    expect((await events(nodeId, 'node.power.requested')).map((e) => e.action)).toEqual(['on']);

    // Of requests made at once, one is accepted, and the others are refused.
    await powerRunEnded(first);
    const together = await Promise.all(
      [1, 2, 3].map(() => api().request<PowerAnswer & ErrorBody>('POST', `/v1/metal/nodes/${nodeId}/power`, { tenantId: 'root', action: 'off' })),
    );
    const accepted = together.filter((r) => r.status === 200);
    expect(accepted).toHaveLength(1);
    expect(together.filter((r) => r.status === 409).map((r) => r.body.error.code)).toEqual(['CONFLICT', 'CONFLICT']);
    await powerRunEnded(accepted[0]!.body);
    bmc.setFaults(machineId, null);

    await powerRunEnded(await power(nodeId, 'on'));
    expect(bmc.get(machineId)?.powerState).toBe('On');
    expect(resetsSince(machineId, before)).toEqual(['reset:On', 'reset:ForceOff', 'reset:On']);
  }, 90_000);

  it('is refused while a workflow drives the power (inspecting, commissioning, deploying, releasing) and on a retired node, with no BMC command', async () => {
    const { nodeId, machineId } = await enroll();
    await settle(nodeId, 'ready');
    const before = commands(machineId).length;
    for (const state of ['inspecting', 'commissioning', 'deploying', 'releasing']) {
      await putInState(nodeId, state);
      const error = await refused(nodeId, 'power', { action: 'cycle' });
      expect(error.code).toBe('INVALID_STATE');
      expect(error.message).toContain(`while the node is ${state}`);
    }
    await putInState(nodeId, 'retired');
    expect((await refused(nodeId, 'power', { action: 'on' })).code).toBe('INVALID_STATE');
    expect(commands(machineId).length).toBe(before);
    expect(await site.t.cp.db.event.count({ where: { subjectId: nodeId, type: 'node.power.requested' } })).toBe(0);
  }, 60_000);
});

describe('metal retire through the API', () => {
  it('retires a ready node: powered off at the BMC, certificates and tokens revoked, BMC credentials forgotten (metal.revokeIdentity), events', async () => {
    const { nodeId, machineId } = await enroll();
    await settle(nodeId, 'ready');
    const db = site.t.cp.db;
    const row = await db.node.findUniqueOrThrow({ where: { id: nodeId } });
    const credentialsRef = row.bmcCredentialsRef as string;
    expect(await db.secret.count({ where: { id: credentialsRef } })).toBe(1);
    // What earlier joins of this machine left: two certificates and a live token.
    const now = Date.now();
    for (const serial of ['aa01', 'aa02']) {
      await db.nodeCertificate.create({
        data: {
          serial: `${serial}${sequence}`,
          nodeId,
          role: serial === 'aa01' ? 'ramdisk' : 'node',
          siteId: site.siteId,
          fingerprint: randomBytes(32).toString('hex'),
          notBefore: new Date(now - 60_000),
          notAfter: new Date(now + 3_600_000),
        },
      });
    }
    await db.joinToken.create({
      data: {
        id: `jt_retire${sequence}`,
        tenantId: 'root',
        siteId: site.siteId,
        nodeId,
        role: 'provisioned',
        secretHash: 'x',
        maxUses: 1,
        usesLeft: 1,
        expiresAt: new Date(now + 3_600_000),
      },
    });
    await powerRunEnded(await power(nodeId, 'on'));

    expect((await verb(nodeId, 'retire')).provisionState).toBe('retiring');
    const retired = await settle(nodeId, 'retired');
    expect(retired.bmc.credentialsSet).toBe(false);
    expect(retired.power).toBe('off');
    expect(bmc.get(machineId)?.powerState).toBe('Off');
    expect(commands(machineId).at(-1)).toBe('reset:ForceOff');
    expect(await db.nodeCertificate.count({ where: { nodeId, revokedAt: null } })).toBe(0);
    expect(await db.nodeCertificate.count({ where: { nodeId } })).toBe(2);
    expect(await db.joinToken.count({ where: { nodeId, revokedAt: null } })).toBe(0);
    expect(await db.secret.count({ where: { id: credentialsRef } })).toBe(0);
    const revoked = await until('node.identity.revoked', async () => (await events(nodeId, 'node.identity.revoked'))[0]);
    expect(revoked).toMatchObject({ certificates: 2, credentialsForgotten: true });
    expect(await events(nodeId, 'node.provision.retired')).toHaveLength(1);
    // Terminal: no verb, no power, no recover.
    expect((await refused(nodeId, 'power', { action: 'on' })).message).toContain('retired');
    expect((await refused(nodeId, 'recover')).code).toBe('INVALID_STATE');
    expect((await refused(nodeId, 'retire')).code).toBe('INVALID_STATE');
  }, 90_000);

  it('is accepted from adopting, adopted, enrolling, ready and failed, and refused with INVALID_STATE from every other state', async () => {
    const legal = ['adopting', 'adopted', 'enrolling', 'ready', 'failed'];
    const illegal = ['inspecting', 'commissioning', 'deploying', 'deployed', 'releasing', 'rescue', 'retiring', 'retired'];
    const { nodeId } = await enroll();
    await settle(nodeId, 'ready');
    for (const state of illegal) {
      await putInState(nodeId, state);
      const error = await refused(nodeId, 'retire');
      expect(error.code).toBe('INVALID_STATE');
      expect(error.details).toMatchObject({ verb: 'retire', state, legalFrom: legal });
      expect((await get(nodeId)).provisionState).toBe(state);
    }
    const nodes = await Promise.all(legal.map(() => enroll()));
    await Promise.all(nodes.map((n) => settle(n.nodeId, 'ready')));
    for (const [i, state] of legal.entries()) {
      const id = nodes[i]?.nodeId as string;
      await putInState(id, state);
      expect((await verb(id, 'retire')).provisionState).toBe('retiring');
    }
    await Promise.all(nodes.map((n) => settle(n.nodeId, 'retired')));
  }, 120_000);
});

describe('maintenance and lastError', () => {
  it('a failure holds the node in maintenance with its error; recover clears both; the chain reaches ready', async () => {
    const { nodeId, add } = await enroll({ bmcPresent: false }); // the BMC does not answer for this system yet
    const failed = await settle(nodeId, 'failed', 90_000);
    expect(failed).toMatchObject({ failedFrom: 'enrolling', maintenance: true, maintenanceSource: 'failure' });
    expect(failed.lastError?.code).toBeTruthy();
    expect(failed.maintenanceReason).toContain('enrolling failed');
    await until('node.maintenance.on', async () => (await events(nodeId, 'node.maintenance.on')).length === 1 || undefined);
    expect((await events(nodeId, 'node.maintenance.on'))[0]).toMatchObject({ by: 'failure' });

    add();
    const recovering = await verb(nodeId, 'recover');
    // recover is a successful move: the error is gone at once, and so is the failure's maintenance.
    expect(recovering).toMatchObject({ provisionState: 'enrolling', lastError: null, maintenance: false, maintenanceReason: null, failedFrom: null });
    expect((await events(nodeId, 'node.maintenance.off'))[0]).toMatchObject({ by: 'recover', actor: expect.stringMatching(/^credential:/) });
    expect(await settle(nodeId, 'ready')).toMatchObject({ lastError: null, maintenance: false });
  }, 120_000);

  it("an operator's maintenance (API and CLI) refuses deploy naming the fix, survives recover, and only the operator clears it", async () => {
    const { nodeId } = await enroll();
    await settle(nodeId, 'ready');
    await api().call('POST', '/v1/profiles', {
      tenantId: 'root',
      document: { id: 'oob-power-on', version: 1, target: 'metal', steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' } }] },
    });
    const rootCredential = site.t.cp.rootCredential;

    const held = await verb(nodeId, 'maintenance', { on: true, reason: 'replacing a DIMM' });
    expect(held).toMatchObject({ maintenance: true, maintenanceReason: 'replacing a DIMM', maintenanceSource: 'operator', provisionState: 'ready' });
    const [on] = await events(nodeId, 'node.maintenance.on');
    expect(on).toMatchObject({ by: 'operator', reason: 'replacing a DIMM', actor: expect.stringMatching(/^credential:/) });
    // Repeating it changes nothing (no second event, same version).
    expect((await verb(nodeId, 'maintenance', { on: true, reason: 'replacing a DIMM' })).version).toBe(held.version);

    const error = await refused(nodeId, 'deploy', { profileId: 'oob-power-on', profileVersion: 1 });
    expect(error.code).toBe('INVALID_STATE');
    expect(error.message).toContain('maintenance (replacing a DIMM)');
    expect(error.message).toContain(`ironflow metal maintenance ${nodeId} --off`);
    expect((await get(nodeId)).provisionState).toBe('ready');

    // A failure while held keeps the operator's reason; recover does not clear it.
    await putInState(nodeId, 'failed');
    const recovered = await verb(nodeId, 'recover');
    expect(recovered).toMatchObject({ maintenance: true, maintenanceSource: 'operator', maintenanceReason: 'replacing a DIMM' });
    await settle(nodeId, 'ready');

    const cli = await runCli(['metal', 'maintenance', nodeId, '--off', '--reason', 'DIMM replaced', '--format', 'json'], {
      apiUrl: site.t.cp.url,
      credential: rootCredential.bearer,
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ nodeId, maintenance: false, maintenanceReason: null });
    await until('node.maintenance.off', async () => (await events(nodeId, 'node.maintenance.off')).find((e) => e.by === 'operator'));
    expect((await events(nodeId, 'node.maintenance.off')).find((e) => e.by === 'operator')).toMatchObject({
      reason: 'DIMM replaced',
      previousReason: 'replacing a DIMM',
    });

    expect((await verb(nodeId, 'deploy', { profileId: 'oob-power-on', profileVersion: 1 })).provisionState).toBe('deploying');
    expect(await settle(nodeId, 'deployed')).toMatchObject({ lastError: null, maintenance: false });
  }, 120_000);

  it('maintenance needs a reason and one of on/off, and is refused on a retired node', async () => {
    const { nodeId } = await enroll();
    const noReason = await api().request('POST', `/v1/metal/nodes/${nodeId}/maintenance`, { tenantId: 'root', on: true });
    expect(noReason.status).toBe(400);
    const cli = await runCli(['metal', 'maintenance', nodeId, '--reason', 'x'], { apiUrl: site.t.cp.url, credential: site.t.cp.rootCredential.bearer });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('--on and --off');
    await settle(nodeId, 'ready');
    await putInState(nodeId, 'retired');
    expect((await refused(nodeId, 'maintenance', { on: true, reason: 'too late' })).message).toContain('retired');
  }, 60_000);
});
