// The agent authentication suite (issue 13): against a real control plane, every way an agent
// request can be refused — a bad signature, a replay, a certificate of another CA, an expired
// or a revoked certificate, a ramdisk certificate on a site agent's route, a site agent's
// certificate on another site's machines, a site agent on a ramdisk's route, a renewal of an
// expired, a revoked or a copied certificate — is refused with its code and reason AND
// recorded as a security event of the right type that names who and why and holds none of
// the request's secrets (signature, certificate, key, body, BMC password). Identities are the product's: a site agent joins with a site token; a ramdisk's
// and an expired certificate are issued and recorded by the node CA as a join would.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import type { Event } from '../../generated/prisma-sqlite/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../services/ids';
import { recordCertificate } from '../../core/joins/record-certificate';
import { AGENT_HEADERS, signAgentRequest } from '../../services/pki/agent-request';
import { loadOrCreateNodeCa } from '../../services/pki/node-ca';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { csrForKey, newKeyAndCsr, workDir } from '../helpers/openssl';
import { seedMachineWithBmc } from '../helpers/machine-with-bmc';

/** Every request of this file comes from its own loopback address: the refusal limit of one source touches no other file. */
const SOURCE = '127.0.3.1';
const BMC_PASSWORD = 'auth-suite-bmc-pw-91c2e';

interface Agent {
  nodeId: string;
  key: KeyObject;
  certificate: string;
  /** The private key's PEM body: what must never show anywhere. */
  keyPem: string;
}

let t: TestControlPlane;
let siteA: string;
let siteB: string;
let siteToken: string;
let siteAgent: Agent;
/** A machine at site A and one at site B, each with BMC credentials on record. */
let machineA: string;
let machineB: string;

beforeAll(async () => {
  t = await startTestControlPlane({ worker: false });
  const site = (key: string) =>
    t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: `lab-${key}`, idempotencyKey: `auth-suite-${key}` });
  siteA = (await site('a')).id;
  siteB = (await site('b')).id;
  siteToken = (await t.root.call<{ token: string }>('POST', `/v1/sites/${siteA}/tokens`, { tenantId: 'root', ttlSeconds: 600 })).token;
  const dir = workDir();
  const csr = newKeyAndCsr(dir, 'site', 'ec');
  const joined = await t.anonymous.call<{ nodeId: string; certificateChain: string[] }>('POST', '/v1/join', { token: siteToken, csr });
  const keyPem = readFileSync(path.join(dir, 'site.key'), 'utf8');
  siteAgent = { nodeId: joined.nodeId, key: createPrivateKey(keyPem), keyPem, certificate: joined.certificateChain[0] as string };
  machineA = await machine(siteA);
  machineB = await machine(siteB);
});
afterAll(async () => t?.close());

const machine = (siteId: string): Promise<string> =>
  seedMachineWithBmc(t.cp, siteId, { address: 'https://10.0.31.1', username: 'admin', password: BMC_PASSWORD });

/** A certificate of the node CA, recorded as a join would (a ramdisk's, or one issued long ago). */
async function issued(nodeId: string, role: 'ramdisk' | 'site', siteId: string, options: { validitySeconds?: number; issuedAt?: Date } = {}): Promise<Agent> {
  const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ca = await loadOrCreateNodeCa(t.cp.db, t.cp.secrets, t.config.dataDir);
  const spki = new Uint8Array(keys.publicKey.export({ type: 'spki', format: 'der' }));
  const certificate = await t.cp.db.$transaction((tx) =>
    recordCertificate(tx, ca, spki, { nodeId, role, siteId }, options.validitySeconds ?? 600, options.issuedAt ?? new Date()),
  );
  return { nodeId, key: keys.privateKey, certificate: certificate.pem, keyPem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

interface Answer {
  status: number;
  body: { error?: { code: string; message: string; details: { reason?: string } } };
}

function post(route: string, body: string, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(route, t.cp.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: SOURCE,
        headers: { ...headers, 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'] }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A request signed by `agent` (or by `signWith`, a key that is not the certificate's). */
function signed(agent: Agent, route: string, payload: Record<string, unknown>, signWith: KeyObject = agent.key) {
  const body = JSON.stringify(payload);
  return { body, headers: signAgentRequest(signWith, agent.certificate, { method: 'POST', pathAndQuery: route, body }) };
}

/** Events recorded since `seq`. */
const eventsAfter = (seq: number) => t.cp.db.event.findMany({ where: { seq: { gt: seq } }, orderBy: { seq: 'asc' } });
const lastSeq = async () => (await t.cp.db.event.findFirst({ orderBy: { seq: 'desc' }, select: { seq: true } }))?.seq ?? 0;

/** None of the request's secrets, nor the agent's key, nor a BMC password, in the event. */
function expectNoSecret(event: Event, agent: Agent, request: { body: string; headers: Record<string, string> }): void {
  const text = JSON.stringify(event);
  const secrets = [
    request.headers[AGENT_HEADERS.signature],
    request.headers[AGENT_HEADERS.certificate],
    agent.certificate.split('\n').slice(1, -2).join(''),
    agent.keyPem.split('\n').slice(1, -2).join(''),
    BMC_PASSWORD,
    siteToken,
    siteToken.split('.')[1] as string,
  ];
  for (const secret of secrets) if (secret) expect(text, 'a security event holds a secret').not.toContain(secret);
  // Bounded, whatever the request carried.
  expect(text.length).toBeLessThan(2_000);
}

/** Sends the request, expects the refusal, and answers the one security event it recorded. */
async function refused(
  agent: Agent,
  route: string,
  request: { body: string; headers: Record<string, string> },
  expected: { status: number; code: string; reason: string; event: string },
): Promise<Event> {
  const before = await lastSeq();
  const answer = await post(route, request.body, request.headers);
  expect({ status: answer.status, code: answer.body.error?.code, reason: answer.body.error?.details.reason }).toEqual({
    status: expected.status,
    code: expected.code,
    reason: expected.reason,
  });
  const events = await eventsAfter(before);
  expect(events.map((e) => e.type)).toEqual([expected.event]);
  const event = events[0] as Event;
  expect(event.data).toMatchObject({ code: expected.code, reason: expected.reason });
  expectNoSecret(event, agent, request);
  return event;
}

describe('agent authentication', () => {
  it('accepts the genuine site agent (the baseline every refusal below differs from by one thing)', async () => {
    const request = signed(siteAgent, '/v1/agents/session', { agentVersion: 'auth-suite' });
    expect((await post('/v1/agents/session', request.body, request.headers)).status).toBe(200);
  });

  it("refuses a request signed by a key that is not the certificate's", async () => {
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const request = signed(siteAgent, '/v1/agents/session', { agentVersion: 'forged' }, stranger);
    const event = await refused(siteAgent, '/v1/agents/session', request, {
      status: 401,
      code: 'UNAUTHENTICATED',
      reason: 'agent-signature',
      event: 'security.agent.refused',
    });
    expect(event).toMatchObject({ subjectId: siteAgent.nodeId, tenantId: 'root', data: { purpose: 'session' } });
  });

  it('refuses a body changed after signing', async () => {
    const request = signed(siteAgent, '/v1/agents/bmc-access', { nodeId: machineA, workflowId: `node:${machineA}:inspecting:1` });
    const tampered = { ...request, body: JSON.stringify({ nodeId: machineB, workflowId: `node:${machineA}:inspecting:1` }) };
    await refused(siteAgent, '/v1/agents/bmc-access', tampered, {
      status: 401,
      code: 'UNAUTHENTICATED',
      reason: 'agent-signature',
      event: 'security.agent.refused',
    });
  });

  it('refuses a replayed signed request', async () => {
    const request = signed(siteAgent, '/v1/agents/session', { agentVersion: 'auth-suite' });
    expect((await post('/v1/agents/session', request.body, request.headers)).status).toBe(200);
    const event = await refused(siteAgent, '/v1/agents/session', request, {
      status: 401,
      code: 'UNAUTHENTICATED',
      reason: 'replayed-request',
      event: 'security.agent.refused',
    });
    expect(event.subjectId).toBe(siteAgent.nodeId);
  });

  it('refuses a certificate another CA issued', async () => {
    const outsider = await issued(newId('node'), 'site', siteA);
    // Same shape, but signed by a CA of its own: a fresh control plane's node CA is not ours.
    const other = await startTestControlPlane({ worker: false });
    try {
      const otherCa = await loadOrCreateNodeCa(other.cp.db, other.cp.secrets, other.config.dataDir);
      const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const pem = (
        await otherCa.issue(
          new Uint8Array(keys.publicKey.export({ type: 'spki', format: 'der' })),
          { nodeId: outsider.nodeId, role: 'site', siteId: siteA },
          600,
          new Date(),
        )
      ).pem;
      const foreign: Agent = {
        nodeId: outsider.nodeId,
        key: keys.privateKey,
        certificate: pem,
        keyPem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      };
      const request = signed(foreign, '/v1/agents/session', {});
      await refused(foreign, '/v1/agents/session', request, {
        status: 401,
        code: 'UNAUTHENTICATED',
        reason: 'unknown-issuer',
        event: 'security.agent.refused',
      });
    } finally {
      await other.close();
    }
  });

  it('refuses an expired certificate', async () => {
    const nodeId = await machine(siteA);
    const expired = await issued(nodeId, 'ramdisk', siteA, { validitySeconds: 600, issuedAt: new Date(Date.now() - 3_600_000) });
    const request = signed(expired, '/v1/agents/session', {});
    const event = await refused(expired, '/v1/agents/session', request, {
      status: 401,
      code: 'UNAUTHENTICATED',
      reason: 'certificate-expired',
      event: 'security.agent.refused',
    });
    expect(event).toMatchObject({ subjectId: nodeId, data: { purpose: 'session' } });
    expect((event.data as { serial?: unknown }).serial).toEqual(expect.any(String));
  });

  it('refuses a revoked certificate at once, on every route', async () => {
    const nodeId = await machine(siteA);
    const ramdisk = await issued(nodeId, 'ramdisk', siteA);
    const first = signed(ramdisk, '/v1/agents/session', {});
    expect((await post('/v1/agents/session', first.body, first.headers)).status).toBe(200);
    // What metal.revokeIdentity and a retire do to the machine's certificates.
    await t.cp.db.nodeCertificate.updateMany({ where: { nodeId, revokedAt: null }, data: { revokedAt: new Date() } });
    for (const route of ['/v1/agents/session', '/v1/agents/user-data']) {
      const request = signed(ramdisk, route, route === '/v1/agents/session' ? {} : { nodeId, workflowId: `node:${nodeId}:deploying:1`, ref: 'sec_x1' });
      const event = await refused(ramdisk, route, request, {
        status: 401,
        code: 'UNAUTHENTICATED',
        reason: 'certificate-revoked',
        event: 'security.agent.refused',
      });
      expect(event.subjectId).toBe(nodeId);
    }
  });

  it("refuses a ramdisk's certificate on every site agent's route", async () => {
    const ramdisk = await issued(machineA, 'ramdisk', siteA);
    const workflowId = `node:${machineA}:inspecting:1`;
    for (const [route, payload, event] of [
      ['/v1/agents/bmc-access', { nodeId: machineA, workflowId }, 'security.bmc-access.refused'],
      ['/v1/agents/proxy-targets', { nodeId: machineA, workflowId }, 'security.proxy-targets.refused'],
      ['/v1/agents/bmc-operations/get', { nodeId: machineA, workflowId, operationId: `${workflowId}/power/on` }, 'security.bmc-operation.refused'],
      ['/v1/agents/boot-secret', { nodeId: machineA, workflowId, ref: 'sec_abc123' }, 'security.boot-secret.refused'],
      ['/v1/agents/boot-secret/release', { nodeId: machineA, workflowId }, 'security.boot-secret.refused'],
    ] as const) {
      const request = signed(ramdisk, route, payload);
      const recorded = await refused(ramdisk, route, request, { status: 403, code: 'PERMISSION_DENIED', reason: 'not-a-site-agent', event });
      expect(recorded.subjectId).toBe(machineA);
      expect(recorded.data).toMatchObject({ agentNodeId: machineA });
    }
  });

  it("refuses a site agent's certificate for another site's machine, as if it did not exist", async () => {
    const workflowId = `node:${machineB}:inspecting:1`;
    for (const [route, payload, event] of [
      ['/v1/agents/bmc-access', { nodeId: machineB, workflowId }, 'security.bmc-access.refused'],
      ['/v1/agents/proxy-targets', { nodeId: machineB, workflowId }, 'security.proxy-targets.refused'],
      ['/v1/agents/bmc-operations/get', { nodeId: machineB, workflowId, operationId: `${workflowId}/power/on` }, 'security.bmc-operation.refused'],
      ['/v1/agents/boot-secret', { nodeId: machineB, workflowId, ref: 'sec_abc123' }, 'security.boot-secret.refused'],
      ['/v1/agents/boot-secret/release', { nodeId: machineB, workflowId }, 'security.boot-secret.refused'],
    ] as const) {
      const request = signed(siteAgent, route, payload);
      const recorded = await refused(siteAgent, route, request, { status: 404, code: 'NOT_FOUND', reason: 'node-not-at-site', event });
      expect(recorded.data).toMatchObject({ nodeId: machineB, agentNodeId: siteAgent.nodeId });
    }
    // Nothing of site B's machine moved: its BMC password stays where it was, unread.
    expect(await t.cp.db.event.count({ where: { type: 'security.bmc-access.granted', subjectId: machineB } })).toBe(0);
  });

  it("refuses a site agent on a ramdisk's route", async () => {
    const request = signed(siteAgent, '/v1/agents/user-data', { nodeId: machineA, workflowId: `node:${machineA}:deploying:1`, ref: 'sec_abc123' });
    await refused(siteAgent, '/v1/agents/user-data', request, {
      status: 403,
      code: 'PERMISSION_DENIED',
      reason: 'not-a-ramdisk',
      event: 'security.userdata.refused',
    });
  });

  it('refuses renewing an expired or a revoked certificate, and a copied certificate without its key', async () => {
    /** A CSR by `agent`'s key: what a genuine renewal sends. */
    const csrOf = (agent: Agent) => {
      const dir = workDir();
      writeFileSync(path.join(dir, 'agent.key'), agent.keyPem, { mode: 0o600 });
      return csrForKey(dir, 'agent', 'renew');
    };
    const renew = (agent: Agent, csr: string) => ({ body: JSON.stringify({ certificate: agent.certificate, csr }), headers: {} });
    const expired = await issued(await machine(siteA), 'ramdisk', siteA, { validitySeconds: 600, issuedAt: new Date(Date.now() - 3_600_000) });
    await refused(expired, '/v1/join/renew', renew(expired, csrOf(expired)), {
      status: 401,
      code: 'UNAUTHENTICATED',
      reason: 'certificate-expired',
      event: 'security.agent.refused',
    });

    const revokedNode = await machine(siteA);
    const revoked = await issued(revokedNode, 'ramdisk', siteA);
    await t.cp.db.nodeCertificate.updateMany({ where: { nodeId: revokedNode }, data: { revokedAt: new Date() } });
    const event = await refused(revoked, '/v1/join/renew', renew(revoked, csrOf(revoked)), {
      status: 401,
      code: 'UNAUTHENTICATED',
      reason: 'certificate-revoked',
      event: 'security.agent.refused',
    });
    expect(event.data).toMatchObject({ purpose: 'renew' });

    // The site agent's certificate is public: without its key, a renewal gets nothing.
    const thief = newKeyAndCsr(workDir(), 'thief', 'ec');
    await refused(siteAgent, '/v1/join/renew', renew(siteAgent, thief), {
      status: 401,
      code: 'UNAUTHENTICATED',
      reason: 'key-mismatch',
      event: 'security.agent.refused',
    });
  });

  it("refuses a ramdisk's certificate for another machine's user data", async () => {
    const ramdisk = await issued(machineA, 'ramdisk', siteA);
    const request = signed(ramdisk, '/v1/agents/user-data', { nodeId: machineB, workflowId: `node:${machineB}:deploying:1`, ref: 'sec_abc123' });
    await refused(ramdisk, '/v1/agents/user-data', request, {
      status: 403,
      code: 'PERMISSION_DENIED',
      reason: 'another-node',
      event: 'security.userdata.refused',
    });
  });
});
