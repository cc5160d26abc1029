// The metal lifecycle end to end, with nothing fake but the hardware: the real API, database,
// control-plane worker and Temporal dev server; a real site agent (BMC drivers, boot server);
// emulated machines (Redfish BMCs, PXE firmware) that boot REAL ramdisk agents and, from
// their disk, an installed OS running the REAL node agent from the user data the ramdisk
// wrote. Three machines enrolled by their BMC alone reach `ready` on their own; a signed
// image served over HTTPS deploys and its OS joins as the same node; undeploy wipes back to
// ready; an abort mid-deploy cleans up and fails; recover follows the table; a tampered
// catalog row stops a deploy before any deploy.image is sent.
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from '../../agent/emulator/fleet';
import { nodeAgentOs } from '../../agent/emulator/installed-os';
import type { Machine } from '../../agent/emulator/machine';
import type { SiteAgent } from '../../agent/site/main';
import { addImageSigner } from '../../core/images/signers';
import { imageSigningInput } from '../../core/images/signing-input';
import type { MetalNodeView } from '../../core/schemas/metal';
import { activeAgent, startBootSite, until, type BootSite } from '../helpers/boot-site';
import { testConfig } from '../helpers/control-plane';
import { freePort } from '../helpers/ports';
import { makeServerCertificate } from '../helpers/tls';

let site: BootSite;
let agent: SiteAgent;
let fleet: Fleet;
let poolId: string;
let imageServer: https.Server;
let imageBase: string;
const served = new Map<string, Buffer>();
const signer = generateKeyPairSync('ed25519');
/** The OS image: random bytes (a non-zero head, so the emulated firmware finds something to boot). */
const osImage = randomBytes(2 * 1024 * 1024 + 77);

const nodes: Array<{ nodeId: string; machine: Machine }> = [];

const get = (nodeId: string) => site.t.root.call<MetalNodeView>('GET', `/v1/metal/nodes/${nodeId}?tenantId=root`);
const verb = (nodeId: string, name: string, body: Record<string, unknown> = {}) => site.t.root.call<MetalNodeView>('POST', `/v1/metal/nodes/${nodeId}/${name}`, { tenantId: 'root', ...body });
async function settle(nodeId: string, state: string, timeoutMs = 90_000): Promise<MetalNodeView> {
  let last: MetalNodeView | undefined;
  try {
    return await until(`${nodeId} to rest in ${state}`, async () => {
      last = await get(nodeId);
      return last.provisionState === state && last.workflowId === null ? last : undefined;
    }, timeoutMs);
  } catch (error) {
    // Say where it stands: the state workflow's pending activities and their last failures.
    const pending = last?.workflowId
      ? ((await site.t.cp.temporal.workflow.getHandle(last.workflowId).describe().catch(() => undefined))?.raw.pendingActivities ?? []).map((a) => ({ type: a.activityType?.name, attempt: a.attempt, failure: a.lastFailure?.message }))
      : [];
    throw new Error(`${(error as Error).message}; last: ${JSON.stringify({ state: last?.provisionState, workflowId: last?.workflowId, lastError: last?.lastError, pending })}`);
  }
}
const diskHead = (machine: Machine, bytes = 4096) => readFileSync(machine.diskPath).subarray(0, bytes);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Registers a gzip image served by the local HTTPS server, signed by the platform signer. */
async function registerImage(ref: string, content: Buffer): Promise<{ id: string; sha256: string }> {
  const gz = gzipSync(content);
  const name = `${ref.replace('@', '-')}.raw.gz`;
  served.set(`/${name}`, gz);
  const input = { tenantId: 'root', ref, kind: 'os', format: 'raw', compression: 'gzip', sha256: sha(gz), sizeBytes: gz.length, source: `${imageBase}/${name}` };
  const signature = sign(null, imageSigningInput(input), signer.privateKey).toString('base64');
  const image = await site.t.root.call<{ id: string; verified: boolean }>('POST', '/v1/images', { ...input, signerId: 'e2e-platform', signature });
  expect(image.verified).toBe(true);
  return { id: image.id, sha256: input.sha256 };
}

async function deployProfile(id: string, imageRef: string): Promise<void> {
  await site.t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id,
      version: 1,
      target: 'metal',
      image: { ref: imageRef, format: 'raw', compression: 'gzip' },
      userData: { kind: 'cloud-init', template: 'ironflow-host.yaml' },
      steps: [
        { use: 'userdata.render' },
        { use: 'metal.ensureRamdisk', timeout: '3m' },
        { use: 'deploy.deploy', timeout: '2m' },
        { use: 'management.setBootDevice', on: 'site', with: { device: 'disk', persistent: true } },
        { use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: '2m' },
      ],
      cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
    },
  });
}

/** Activity types a workflow's history scheduled. */
async function scheduledActivities(workflowId: string): Promise<string[]> {
  const history = await site.t.cp.temporal.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name ? [e.activityTaskScheduledEventAttributes.activityType.name] : []));
}

/** Every workflow id of the node's lifecycle so far, per state: `node:<id>:<state>:<n>`. */
async function stateWorkflows(nodeId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of site.t.cp.temporal.workflow.list({ query: `NodeId = "${nodeId}" AND WorkflowType = "provision"` })) ids.push(w.workflowId);
  return ids;
}

const bootEntries = (): Array<{ nodeId: string }> => {
  const file = path.join(agent.identity.dataDir, 'boot-entries.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { entries: Array<{ nodeId: string }> }).entries : [];
};
async function liveTokens(nodeId: string): Promise<number> {
  return site.t.cp.db.joinToken.count({ where: { nodeId, revokedAt: null, usesLeft: { gt: 0 }, expiresAt: { gt: new Date() } } });
}

beforeAll(async () => {
  const apiPort = await freePort();
  // The installed OS joins the API's public URL (the user data's --server), so it must be the real port.
  const config = await testConfig({ IRONFLOW_API_PORT: String(apiPort), IRONFLOW_API_URL: `http://127.0.0.1:${apiPort}`, IRONFLOW_AGENT_URL: 'https://downloads.example.com/ironflow-agent', IRONFLOW_AGENT_SHA256: sha(Buffer.from('the published agent')) });
  site = await startBootSite('e2e-site', { config });
  agent = await site.startAgent();
  await activeAgent(agent);
  poolId = (await site.t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId: site.siteId, class: 'e2e-metal' })).id;
  await addImageSigner(site.t.cp.db, { tenantId: 'root', id: 'e2e-platform', publicKeyPem: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString() });

  // The image server: HTTPS with a site CA the ramdisks carry.
  const tls = makeServerCertificate(mkdtempSync(path.join(site.t.config.dataDir, 'tls-')), 'images.e2e');
  imageServer = https.createServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, (req, res) => {
    const body = served.get(req.url ?? '');
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => imageServer.listen(0, '127.0.0.1', () => r()));
  imageBase = `https://127.0.0.1:${(imageServer.address() as AddressInfo).port}`;

  fleet = await Fleet.start({
    dataDir: path.join(site.t.config.dataDir, 'fleet'),
    bootServerUrl: () => agent.bootServer?.url,
    temporalAddress: site.t.config.temporal.address,
    installedOs: nodeAgentOs(),
    ramdiskTrustedCaPems: [tls.caPem],
    sleepScale: 0.05,
  });
}, 120_000);

afterAll(async () => {
  await fleet?.close();
  await agent?.stop();
  imageServer?.close();
  await site?.t.close();
});

describe('the metal lifecycle on emulated machines', () => {
  it('three machines enrolled by their BMC alone reach ready on their own (enroll → inspect → commission)', async () => {
    for (let i = 0; i < 3; i++) {
      const { machine, bmc } = await fleet.add({ diskBytes: 8 * 1024 * 1024 });
      const enrolled = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', { tenantId: 'root', poolId, bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password } });
      expect(enrolled).toMatchObject({ provisionState: 'enrolling', macs: [] });
      nodes.push({ nodeId: enrolled.nodeId, machine });
    }
    const ready = await Promise.all(nodes.map((n) => settle(n.nodeId, 'ready', 150_000)));
    for (const [i, node] of ready.entries()) {
      const machine = nodes[i]?.machine as Machine;
      // Out-of-band inspection found the MACs and UUID; the ramdisk's inventory agreed.
      expect(node).toMatchObject({ macs: machine.description.macs, productUuid: machine.description.uuid, power: 'off', maintenance: false });
      expect(machine.state).toBe('off');
      const workflows = (await stateWorkflows(node.nodeId)).sort();
      expect(workflows).toEqual([`node:${node.nodeId}:commissioning:3`, `node:${node.nodeId}:enrolling:1`, `node:${node.nodeId}:inspecting:2`]);
      // The ramdisk joined as the same node; nothing of the boot is left behind.
      expect((await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId: node.nodeId } })).map((c) => c.role)).toContain('ramdisk');
      expect(await liveTokens(node.nodeId)).toBe(0);
    }
    expect(bootEntries()).toEqual([]);
  }, 200_000);

  it('a signed image deploys: the disk holds its bytes and the installed OS joins as the same node; undeploy wipes back to ready', async () => {
    const { nodeId, machine } = nodes[0] as { nodeId: string; machine: Machine };
    await registerImage('e2e-os@1', osImage);
    await deployProfile('e2e-os-host', 'e2e-os@1');
    expect((await verb(nodeId, 'deploy', { profileId: 'e2e-os-host', profileVersion: 1 })).provisionState).toBe('deploying');
    const deployed = await settle(nodeId, 'deployed', 120_000);
    expect(deployed).toMatchObject({ role: 'host', power: 'on' });
    expect(sha(readFileSync(machine.diskPath).subarray(0, osImage.length))).toBe(sha(osImage));
    expect(machine.state).toBe('installed-os');
    // The installed OS's node agent: a `node` certificate of the same node, its session live.
    const certificates = await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId, role: 'node' } });
    expect(certificates).toHaveLength(1);
    const session = await site.t.cp.db.agentSession.findUniqueOrThrow({ where: { nodeId } });
    expect(session.role).toBe('node');
    expect(await site.t.cp.db.node.count({ where: { siteId: site.siteId } })).toBe(1 + nodes.length); // the site agent and the three machines: nobody joined as a new node
    const events = (await site.t.cp.db.event.findMany({ where: { subjectId: nodeId } })).map((e) => e.type);
    expect(events).toEqual(expect.arrayContaining(['node.userdata.rendered', 'security.userdata.granted', 'node.deploy.image']));
    expect(await liveTokens(nodeId)).toBe(0);
    expect(await site.t.cp.db.secret.count({ where: { purpose: { startsWith: 'userdata:' } } })).toBe(0); // the sealed document went with its workflow

    expect((await verb(nodeId, 'undeploy')).provisionState).toBe('releasing');
    const released = await settle(nodeId, 'ready', 120_000);
    expect(released).toMatchObject({ role: 'machine', power: 'off' });
    expect(diskHead(machine).every((b) => b === 0)).toBe(true);
    expect(machine.state).toBe('off');
    expect(bootEntries()).toEqual([]);
  }, 260_000);

  it('abort in the middle of a deploy runs the cleanup (no boot entry or token left) and lands in failed; recover goes through releasing to ready', async () => {
    const { nodeId, machine } = nodes[1] as { nodeId: string; machine: Machine };
    await verb(nodeId, 'deploy', { profileId: 'e2e-os-host', profileVersion: 1 });
    // In the middle: the boot entry is out and the machine is PXE-booting or in its ramdisk.
    await until('the deploy to send its boot entry', () => bootEntries().some((e) => e.nodeId === nodeId), 60_000);
    const aborted = await verb(nodeId, 'abort', { reason: 'e2e: stop this deploy' });
    expect(aborted).toMatchObject({ provisionState: 'failed', failedFrom: 'deploying', maintenance: true, lastError: { code: 'ABORTED' } });
    const workflowId = `node:${nodeId}:deploying:4`;
    await until('the aborted deploy to end', async () => (await site.t.cp.temporal.workflow.getHandle(workflowId).describe()).status.name !== 'RUNNING', 60_000);
    expect(bootEntries().filter((e) => e.nodeId === nodeId)).toEqual([]);
    expect(await liveTokens(nodeId)).toBe(0);
    expect(await scheduledActivities(workflowId)).toContain('boot.cleanUp');
    expect((await settle(nodeId, 'failed')).failedFrom).toBe('deploying');

    // failedFrom deploying → releasing (a wipe) → ready.
    expect((await verb(nodeId, 'recover')).provisionState).toBe('releasing');
    await settle(nodeId, 'ready', 120_000);
    expect(diskHead(machine).every((b) => b === 0)).toBe(true);
  }, 260_000);

  it('a tampered catalog row stops the deploy before any deploy.image is sent', async () => {
    const { nodeId, machine } = nodes[2] as { nodeId: string; machine: Machine };
    const image = await registerImage('e2e-os@2', randomBytes(64 * 1024));
    await deployProfile('e2e-os-host-2', 'e2e-os@2');
    // Someone with database access points the signed row at another artifact: its digest
    // (a signed column; the source alone is not signed, the digest on the stream guards it).
    const evil = gzipSync(randomBytes(64 * 1024));
    served.set('/e2e-os-2.raw.gz', evil);
    await site.t.cp.db.image.update({ where: { id: image.id }, data: { sha256: sha(evil), sizeBytes: evil.length } });
    await verb(nodeId, 'deploy', { profileId: 'e2e-os-host-2', profileVersion: 1 });
    const failed = await settle(nodeId, 'failed', 120_000);
    expect(failed).toMatchObject({ failedFrom: 'deploying', lastError: { code: 'INVALID_STATE' } });
    expect(failed.lastError?.message).toMatch(/signature/);
    const workflowId = (await stateWorkflows(nodeId)).find((id) => id.includes(':deploying:')) as string;
    const activities = await scheduledActivities(workflowId);
    expect(activities).toContain('deploy.deploy');
    expect(activities).not.toContain('deploy.image');
    expect(activities).toContain('boot.cleanUp');
    expect(await site.t.cp.db.event.count({ where: { subjectId: nodeId, type: 'node.deploy.image' } })).toBe(0);
    expect(diskHead(machine).every((b) => b === 0)).toBe(true);
    expect((await verb(nodeId, 'recover')).provisionState).toBe('releasing');
    await settle(nodeId, 'ready', 120_000);
  }, 260_000);
});
