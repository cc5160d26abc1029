// User data, the provisioned attestor, the node agent and host config, on a real control
// plane, Temporal dev server and database: userdata.render inside a provision run (token
// minted, document sealed, references only in the history), the installed OS's agent
// joining as the same node and ending a boot.kexec `await: rejoin` wait, the attestor's
// refusals, and host config units landing in Node.hostSpec and reaching the agent.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeAgent, type NodeAgent } from '../../agent/node/main';
import { joinTokenFromUserData, writeJoinTokenFile } from '../../agent/node/user-data';
import { withDeployHostSpec } from '../../activities/deploy-host-spec';
import { verifyAttestation } from '../../services/attestations/verify';
import { loadConfig } from '../../services/config';
import { isIronflowError } from '../../core/errors';
import { newId } from '../../services/ids';
import type { JsonObject } from '../../core/plan';
import { applyStateOutcome } from '../../services/metal/lifecycle-moves';
import { buildCsr } from '../../services/pki/csr-builder';
import { sealingCodecFor } from '../../services/sealing';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { startEmulatedRamdisk, until, type EmulatedAgent } from '../helpers/provision';

let t: TestControlPlane;
let siteId: string;
let poolId: string;
const agents: EmulatedAgent[] = [];
const nodeAgents: NodeAgent[] = [];
const AGENT_SHA256 = createHash('sha256').update('the published node agent').digest('hex');
/** What the emulated ramdisk's kexec boots: per node, the installed OS starting its agent. */
const installedOs = new Map<string, () => Promise<void>>();

async function newNode(): Promise<string> {
  const nodeId = newId('node');
  await t.cp.db.node.create({ data: { id: nodeId, tenantId: 'root', siteId, poolId, role: 'machine', provisionState: 'deploying' } });
  // The ramdisk side of this machine: boot.kexec "boots the installed OS".
  agents.push(
    await startEmulatedRamdisk(
      t.config,
      t.cp.db,
      { nodeId, siteId },
      {
        'boot.kexec': async () => {
          setTimeout(() => void installedOs.get(nodeId)?.(), 50);
          return { kexec: true };
        },
      },
    ),
  );
  return nodeId;
}

async function run(document: Record<string, unknown>, nodeId: string, labels: Record<string, string> = {}): Promise<string> {
  await t.root.call('POST', '/v1/profiles', { tenantId: 'root', document });
  const started = await t.root.call<{ workflowId: string }>('POST', `/v1/profiles/${document.id as string}/runs`, {
    tenantId: 'root',
    nodeId,
    provisionState: 'deploying',
    labels,
  });
  return started.workflowId;
}

/** The sealed document of a workflow, as the ramdisk would fetch it. */
async function userDataOf(workflowId: string): Promise<string> {
  const row = await t.cp.db.secret.findFirst({ where: { purpose: `userdata:${workflowId}` } });
  expect(row).not.toBeNull();
  return t.cp.secrets.get(t.cp.db, row!.id);
}

const isPayload = (value: object): value is Payload => 'data' in value && value.data instanceof Uint8Array && 'metadata' in value;

/** Every string of a history, payloads opened with the control plane's history codec and decoded (Temporal stores them sealed, as bytes). */
async function historyText(history: unknown): Promise<string> {
  const codec = sealingCodecFor(t.config);
  const texts: string[] = [];
  const walk = async (value: unknown, key = ''): Promise<void> => {
    if (value instanceof Uint8Array) texts.push(Buffer.from(value).toString('utf8'));
    else if (Array.isArray(value)) for (const v of value) await walk(v);
    else if (value && typeof value === 'object' && isPayload(value) && codec)
      for (const [k, v] of Object.entries((await codec.decode([value]))[0] ?? {})) await walk(v, k);
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) await walk(v, k);
    else if (typeof value === 'string') texts.push(key === 'data' ? Buffer.from(value, 'base64').toString('utf8') : value);
  };
  await walk(history);
  return texts.join('\n');
}

async function join(token: string, nodeId?: string) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return t.anonymous.request<{ nodeId: string; role: string; error?: { code: string; details: { reason?: string } } }>('POST', '/v1/join', {
    token,
    csr: await buildCsr(privateKey, 'os'),
    ...(nodeId ? { nodeId } : {}),
  });
}

const renderAndWait = (id: string) => ({
  id,
  version: 1,
  target: 'metal',
  userData: { kind: 'cloud-init', template: 'ironflow-host.yaml' },
  steps: [{ use: 'userdata.render' }, { use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: '60s' }],
});

beforeAll(async () => {
  const config = await testConfig({ IRONFLOW_AGENT_URL: 'https://downloads.example.com/ironflow-agent?sig=a&b=%20', IRONFLOW_AGENT_SHA256: AGENT_SHA256 });
  t = await startTestControlPlane({ config });
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-ud', idempotencyKey: 'ud-site' })).id;
  const pool = await t.root.call<{ id: string }>('POST', '/v1/pools', {
    tenantId: 'root',
    siteId,
    class: 'gpu-ud',
    policy: { hugepages: { size: '1G', count: 64 }, gpuSharing: { strategy: 'mps', replicas: 4, when: 'gpu' } },
  });
  poolId = pool.id;
});

afterAll(async () => {
  await Promise.all(nodeAgents.map((a) => a.stop()));
  await Promise.all(agents.map((a) => a.stop()));
  await t?.close();
});

describe('user data and the installed OS', () => {
  it('userdata.render mints a provisioned token and seals the document; the node agent joins as the same node and ends the rejoin wait', async () => {
    const nodeId = await newNode();
    const dataDir = mkdtempSync(path.join(t.config.dataDir, 'os-'));
    const tokenFile = path.join(dataDir, 'join-token');
    let workflowId = '';
    installedOs.set(nodeId, async () => {
      // What cloud-init does on first boot (the token file), then the agent's own start.
      writeJoinTokenFile('cloud-init', await userDataOf(workflowId), tokenFile);
      nodeAgents.push(
        await startNodeAgent({
          server: t.cp.url,
          tokenFile,
          nodeId,
          dataDir,
          root: path.join(dataDir, 'root'),
          machine: {
            hostname: nodeId.replace(/_/g, '-'),
            productUuid: null,
            arch: 'x86_64',
            cpus: 8,
            memoryBytes: 2 ** 34,
            gpus: [],
            dcgm: async (level) => ({ level, source: 'emulated', tests: [{ name: 'memory', passed: true }] }),
          },
          dcgmiBinary: path.join(dataDir, 'no-dcgmi'),
        }),
      );
    });
    const doc = renderAndWait('ud-deploy');
    workflowId = await run(
      {
        ...doc,
        acceptance: [
          { use: 'diag.dcgm', on: 'node', with: { level: 2 }, timeout: '30s' },
          { use: 'inventory.refresh', on: 'node', timeout: '30s' },
        ],
      },
      nodeId,
    );
    const handle = t.cp.temporal.workflow.getHandle(workflowId);
    const result = (await handle.result()) as { outputs: Record<string, Record<string, unknown>> };

    // The step returns references only.
    const rendered = result.outputs['steps[0]'] as { userDataRef: string; kind: string; joinTokenId: string };
    expect(Object.keys(rendered).sort()).toEqual(['joinTokenId', 'kind', 'userDataRef']);
    expect(rendered.kind).toBe('cloud-init');
    const token = await t.cp.db.joinToken.findUnique({ where: { id: rendered.joinTokenId } });
    expect(token).toMatchObject({ role: 'provisioned', nodeId, workflowId, siteId, poolId, maxUses: 1, usesLeft: 0 });
    const ttl = token!.expiresAt.getTime() - token!.createdAt.getTime();
    expect(Math.abs(ttl - 7_200_000)).toBeLessThan(5_000);

    // The sealed document is a cloud-init document with the bearer of that token.
    const document = await userDataOf(workflowId);
    expect(document.startsWith('#cloud-config\n')).toBe(true);
    expect(document).toContain(`hostname: ${nodeId.replace(/_/g, '-')}`);
    expect(document).toContain(AGENT_SHA256);
    const bearer = joinTokenFromUserData('cloud-init', document);
    expect(bearer.startsWith(`ifjt_${rendered.joinTokenId}.`)).toBe(true);

    // The history holds no bearer, no document: references only.
    const history = await historyText(await handle.fetchHistory());
    expect(history).toContain('"userDataRef"'); // the payloads were decoded
    expect(history).toContain(rendered.userDataRef);
    expect(history).not.toContain(bearer.split('.')[1]);
    expect(history).not.toContain(bearer);
    expect(history).not.toContain('cloud-config');

    // The installed OS joined as the same node, with a node certificate; the token file is gone.
    const agent = nodeAgents[0]!;
    expect(agent.identity.current).toMatchObject({ nodeId, role: 'node' });
    expect(existsSync(tokenFile)).toBe(false);
    const certs = await t.cp.db.nodeCertificate.findMany({ where: { nodeId, role: 'node' } });
    expect(certs).toHaveLength(1);
    expect(await t.cp.db.node.count({ where: { id: nodeId } })).toBe(1);
    // Its worker served the acceptance steps on node.<id>, and its session is live.
    expect(result.outputs['acceptance[0]']).toMatchObject({ nodeId, level: 2, passed: true, source: 'emulated' });
    // Attested by the node agent's own certificate (role node), as the control plane checks it.
    const attested = await verifyAttestation(t.cp.db, result.outputs['acceptance[0]'] as JsonObject, {
      context: { use: 'diag.dcgm', nodeId, workflowId, stepKey: 'acceptance[0]' },
      role: 'node',
      runStartedAt: (await handle.describe()).startTime,
    });
    expect((await t.cp.db.nodeCertificate.findUniqueOrThrow({ where: { serial: attested.serial } })).role).toBe('node');
    expect((result.outputs['acceptance[1]'] as { sections: { system: { hostname: string } } }).sections.system.hostname).toBe(nodeId.replace(/_/g, '-'));
    const session = await until(
      () => t.cp.db.agentSession.findUnique({ where: { nodeId } }),
      (s) => s?.role === 'node',
    );
    expect(session?.taskQueue).toBe(`node.${nodeId}`);

    // A used token never joins again.
    const again = await join(bearer, nodeId);
    expect(again.status).toBe(401);
    expect(again.body.error?.details.reason).toBe('token-used-up');
  });

  it('the provisioned attestor: refused for another node id and after the workflow ended, consuming nothing; joins as the node while it runs', async () => {
    const nodeId = await newNode();
    const workflowId = await run(renderAndWait('ud-attest'), nodeId);
    const document = await until(
      () => userDataOf(workflowId).catch(() => ''),
      (d) => d !== '',
      20_000,
      'the rendered user data',
    );
    const bearer = joinTokenFromUserData('cloud-init', document);
    const tokenId = bearer.slice('ifjt_'.length).split('.')[0] as string;

    const other = await join(bearer, newId('node'));
    expect(other.status).toBe(401);
    expect(other.body.error?.details.reason).toBe('node-mismatch');
    expect((await t.cp.db.joinToken.findUnique({ where: { id: tokenId } }))?.usesLeft).toBe(1);

    const joined = await join(bearer, nodeId);
    expect(joined.status).toBe(201);
    expect(joined.body).toMatchObject({ nodeId, role: 'node' });
    // The join's agentJoined ended the wait: the run completes.
    await t.cp.temporal.workflow.getHandle(workflowId).result();

    // A token of a workflow that ended is refused, and stays unused.
    const ended = await run(
      { id: 'ud-ended', version: 1, target: 'metal', userData: { kind: 'ignition', template: 'ironflow-host.ign' }, steps: [{ use: 'userdata.render' }] },
      nodeId,
    );
    await t.cp.temporal.workflow.getHandle(ended).result();
    const late = joinTokenFromUserData('ignition', await userDataOf(ended));
    const refused = await join(late, nodeId);
    expect(refused.status).toBe(409);
    expect(refused.body.error?.details.reason).toBe('workflow-not-running');
    expect((await t.cp.db.joinToken.findUnique({ where: { id: late.slice('ifjt_'.length).split('.')[0] as string } }))?.usesLeft).toBe(1);
  });

  it('host config: profile units with when and the pool’s overriding units become Node.hostSpec on a deploy’s success, and reach the node agent', async () => {
    const agent = nodeAgents[0]!;
    const nodeId = agent.identity.current.nodeId;
    const profile = {
      id: 'ud-host',
      version: 1,
      target: 'metal',
      hostConfig: {
        hugepages: { size: '2M', count: 1024 },
        'kernel-modules': { load: ['vfio_pci'] },
        iommu: { mode: 'passthrough', when: 'gpu=h100' },
        cpu: { governor: 'performance', when: '!gpu' },
        'nvidia-driver': { branch: '580' },
      },
      steps: [{ use: 'event.append', with: { message: 'x' } }],
    };
    await t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: profile });
    const bad = await t.root.request<{ error: { code: string; details: { path: string } } }>('POST', '/v1/profiles', {
      tenantId: 'root',
      document: { ...profile, id: 'ud-host-bad', hostConfig: { hugepages: { size: '3M', count: 1 } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.path).toBe('document.hostConfig.hugepages.size');

    const workflowId = `node:${nodeId}:deploying:9`;
    await t.cp.db.node.update({
      where: { id: nodeId },
      data: { provisionState: 'deploying', workflowId, deployProfile: { id: 'ud-host', version: 1 }, labels: { gpu: 'h100' } },
    });
    const applied = await applyStateOutcome(t.cp.db, await withDeployHostSpec(t.cp.db, { nodeId, workflowId, outcome: 'succeeded', role: 'host' }));
    expect(applied).toEqual({ applied: true, state: 'deployed' });
    const node = await t.cp.db.node.findUniqueOrThrow({ where: { id: nodeId } });
    const spec = node.hostSpec as {
      units: Array<{ name: string; source: string; known: boolean; settings: Record<string, unknown> }>;
      skipped: string[];
      profile: string;
    };
    expect(spec.profile).toBe('ud-host@1');
    expect(spec.units.map((u) => `${u.name}:${u.source}:${u.known}`)).toEqual([
      'hugepages:pool:true',
      'kernel-modules:profile:true',
      'iommu:profile:true',
      'gpu-sharing:pool:true',
      'nvidia-driver:profile:false',
    ]);
    expect(spec.units[0]!.settings).toEqual({ size: '1G', count: 64, perNumaNode: false });
    expect(spec.skipped).toEqual(['cpu']);

    // The session's host section reaches the agent's converger, which applies it under its root (a directory here):
    // the known units' files are written (gpu-sharing by MPS is a systemd unit, pending where systemd does not run the root), the unknown one fails.
    const state = await until(
      async () => agent.converger.state(),
      (s) => s?.profile === 'ud-host@1',
      20_000,
      'the host spec at the agent',
    );
    expect(state!.units.map((u) => `${u.name}:${u.state}`)).toEqual([
      'hugepages:converged',
      'kernel-modules:converged',
      'iommu:converged',
      'gpu-sharing:pending',
      'nvidia-driver:failed',
    ]);
    expect(state!.root).toBe(agent.converger.root.dir);
    expect(readFileSync(agent.converger.root.path('/etc/default/grub.d/90-ironflow-hugepages.cfg'), 'utf8')).toContain('hugepages=64');
    // The beat that brought the spec found the node resting deployed: its agent now beats every 60 s, not 15.
    expect(agent.session.lastAnswer?.heartbeatIntervalMs).toBe(60_000);
  });

  it('checks the user data settings at start: INVALID_CONFIG naming the key and the fix', () => {
    let error: unknown;
    try {
      loadConfig({ ...process.env, IRONFLOW_AGENT_URL: 'https://x.example/agent', IRONFLOW_AGENT_SHA256: 'ABC' });
    } catch (e) {
      error = e;
    }
    expect(isIronflowError(error) && error.code).toBe('INVALID_CONFIG');
    expect((error as Error).message).toMatch(/userData\.agentSha256.*IRONFLOW_AGENT_SHA256/);
  });
});
