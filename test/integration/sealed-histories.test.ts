// Sealed histories against the run's real Temporal dev server: a control plane with
// temporal.sealHistories on runs a provision workflow of control steps only (agents' steps are
// agent-gateway-sealing.test.ts's); its raw history, read with the Temporal CLI and no codec, holds no
// plaintext of any input or result, while the control plane's own client reads them, and so
// does the CLI through the API's codec endpoint with an operator's credential. The endpoint
// itself: who may decode (401, 403, events), CORS for the Web UI's origin only, bounds.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../console/cookies';
import { parseBearer } from '../../services/bearer';
import { CREDENTIAL_SCHEME } from '../../services/credentials';
import type { ProvisionStatus } from '../../core/plan';
import { CODEC_PATH, KEY_ID_METADATA, SEALED_ENCODING } from '../../services/sealing';
import { temporalWebUiBase } from '../../core/temporal-links';
import { lifecycleWorkflowId } from '../../services/temporal/workflow-ids';
import { wakeLifecycle } from '../../services/temporal/starters';
import { requireTool } from '../../stack/tools';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { createNode } from '../helpers/provision';

const run = promisify(execFile);
let t: TestControlPlane;
/** A value only the workflow's inputs and results hold (the step's message). */
const marker = `sealed-note-${randomBytes(6).toString('hex')}`;
const nodeId = `node_sealed${randomBytes(5).toString('hex')}`;
let workflowId = '';
const SEALED_B64 = Buffer.from(SEALED_ENCODING).toString('base64');

interface PayloadJson {
  metadata?: Record<string, string>;
  data?: string;
}

beforeAll(async () => {
  t = await startTestControlPlane({ config: await testConfig({ IRONFLOW_SEAL_HISTORIES: 'true' }) });
  await createNode(t.cp.db, { nodeId, siteId: 'site_sealed' });
  await t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id: 'sealed-control-only',
      version: 1,
      target: 'metal',
      steps: [{ use: 'event.append', with: { message: marker } }],
      acceptance: [{ use: 'event.append', with: { message: `${marker}-accepted` } }],
    },
  });
  workflowId = (
    await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/sealed-control-only/runs', { tenantId: 'root', nodeId, provisionState: 'inspecting' })
  ).workflowId;
  await t.cp.temporal.workflow.getHandle(workflowId).result();
});

afterAll(async () => {
  await t?.close();
});

/** `temporal workflow show` as JSON, against the test's server: raw, or through a codec endpoint. */
async function showHistory(codec?: { endpoint: string; auth: string }, id = workflowId): Promise<string> {
  const args = [
    'workflow',
    'show',
    '--workflow-id',
    id,
    '--address',
    t.config.temporal.address,
    '--namespace',
    t.config.temporal.namespace,
    '--output',
    'json',
  ];
  if (codec) args.push('--codec-endpoint', codec.endpoint, '--codec-auth', codec.auth);
  const { stdout } = await run(requireTool('temporal'), args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** Every payload of a history (objects with metadata.encoding), with where it was. */
function payloadsIn(value: unknown, at = ''): Array<{ at: string; payload: PayloadJson }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => payloadsIn(v, `${at}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  const metadata = record.metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata.encoding === 'string') return [{ at, payload: record as PayloadJson }];
  return Object.entries(record).flatMap(([k, v]) => payloadsIn(v, at ? `${at}.${k}` : k));
}

const decodePath = `${CODEC_PATH}/decode`;
const encodePath = `${CODEC_PATH}/encode`;
const toJson = (p: Payload): PayloadJson => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')])),
  data: Buffer.from(p.data ?? []).toString('base64'),
});
const fromJson = (p: PayloadJson): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});

describe('a sealed history', () => {
  it('holds no plaintext of the inputs and results in Temporal, every payload but search attributes sealed', async () => {
    const raw = await showHistory();
    const history = JSON.parse(raw) as unknown;
    const payloads = payloadsIn(history);
    const sealed = payloads.filter(({ payload }) => payload.metadata?.encoding === SEALED_B64).map((p) => p.at);
    // The workflow's input and result, each activity's input and result, the memo and the
    // Web UI's summaries: sealed.
    for (const where of [
      /workflowExecutionStartedEventAttributes\.input/,
      /workflowExecutionCompletedEventAttributes\.result/,
      /activityTaskScheduledEventAttributes\.input/,
      /activityTaskCompletedEventAttributes\.result/,
      /workflowExecutionStartedEventAttributes\.memo/,
      /userMetadata\.summary/,
    ]) {
      expect(
        sealed.some((at) => where.test(at)),
        String(where),
      ).toBe(true);
    }
    // Only search attributes stay readable (ids the Web UI lists by, no secret). The SDK's own
    // patch markers would too, but a run started now takes its patches without one (workflows/patches.ts).
    const unsealed = payloads.filter(({ payload }) => payload.metadata?.encoding !== SEALED_B64);
    expect(unsealed.filter((p) => /\.patch-data\./.test(p.at))).toEqual([]);
    expect(raw).not.toContain('TemporalChangeVersion');
    expect(unsealed.map((p) => p.at).filter((at) => !/\.searchAttributes\./.test(at))).toEqual([]);
    expect(unsealed.length).toBeGreaterThan(0);
    // The step's message is nowhere; the node id only in the workflow id.
    expect(raw).not.toContain(marker);
    expect(raw.replace(new RegExp(`"workflowId": "node:${nodeId}:inspecting:1"`, 'g'), '')).not.toContain(nodeId);
  });

  it("a node lifecycle's reads and writes of the node run as local activities, their markers sealed", async () => {
    const restingNodeId = `node_resting${randomBytes(5).toString('hex')}`;
    await t.cp.db.node.create({ data: { id: restingNodeId, tenantId: 'root', siteId: 'site_sealed', role: 'machine', provisionState: 'ready' } });
    await wakeLifecycle(t.cp.temporal, t.config.controlQueue, { id: restingNodeId, tenantId: 'root', siteId: 'site_sealed', provisionState: 'ready' });
    const lifecycleId = lifecycleWorkflowId(restingNodeId);
    expect(await t.cp.temporal.workflow.getHandle(lifecycleId).result()).toEqual({ state: 'ready', transitions: 0 });
    const history = JSON.parse(await showHistory(undefined, lifecycleId)) as { events: Array<{ eventType: string }> };
    // Its look at the node (lifecycleNext) is a marker in the history, with no activity task on the server.
    // It was started by this code: no patch marker beside it (workflows/patches.ts).
    expect(history.events.map((e) => e.eventType).filter((type) => /ACTIVITY_TASK|MARKER_RECORDED/.test(type))).toEqual(['EVENT_TYPE_MARKER_RECORDED']);
    const payloads = payloadsIn(history);
    const unsealed = payloads.filter(({ payload }) => payload.metadata?.encoding !== SEALED_B64);
    const plainJson = (at: RegExp) =>
      unsealed.filter((p) => at.test(p.at)).map((p) => JSON.parse(Buffer.from(p.payload.data ?? '', 'base64').toString('utf8')) as Record<string, unknown>);
    // The SDK's own record of the local activity stays readable: which one, its attempt and times.
    expect(plainJson(/markerRecordedEventAttributes\.details\.data\./).map((d) => Object.keys(d).sort())).toEqual([
      ['activity_id', 'activity_type', 'attempt', 'backoff', 'complete_time', 'original_schedule_time', 'seq'],
    ]);
    expect(unsealed.map((p) => p.at).filter((at) => !/\.searchAttributes\./.test(at) && !/markerRecordedEventAttributes\.details\.data\./.test(at))).toEqual(
      [],
    );
    // Its result (the node's state) is sealed.
    expect(payloads.filter((p) => /markerRecordedEventAttributes\.details\.result\./.test(p.at)).map((p) => p.payload.metadata?.encoding)).toEqual([
      SEALED_B64,
    ]);
  });

  it("reads decoded through the control plane's client", async () => {
    const handle = t.cp.temporal.workflow.getHandle(workflowId);
    const result = (await handle.result()) as { history: Array<{ key: string; outcome: string }> };
    expect(result.history.map((h) => `${h.key}:${h.outcome}`)).toEqual(['steps[0]:succeeded', 'acceptance[0]:succeeded']);
    const status = await handle.query<ProvisionStatus>('status');
    expect(status.phase).toBe('succeeded');
    // The control steps got their inputs decoded: their events carry the message.
    const events = await t.cp.db.event.findMany({ where: { type: 'workflow.step.note', subjectId: nodeId } });
    expect(events.map((e) => (e.data as { message: string }).message)).toEqual([marker, `${marker}-accepted`]);
  });

  it("reads decoded with the temporal CLI through the codec endpoint and an operator's credential", async () => {
    const decoded = payloadsIn(JSON.parse(await showHistory({ endpoint: `${t.cp.url}${CODEC_PATH}`, auth: `Bearer ${t.cp.rootCredential.bearer}` })));
    expect(decoded.filter(({ payload }) => payload.metadata?.encoding === SEALED_B64)).toEqual([]);
    const plaintext = decoded.map(({ payload }) => Buffer.from(payload.data ?? '', 'base64').toString('utf8')).join('\n');
    expect(plaintext).toContain(marker);
    expect(plaintext).toContain(`"nodeId":"${nodeId}"`);
  });
});

describe('the codec endpoint', () => {
  const webUi = () => temporalWebUiBase(t.config);
  const codecEvents = () => t.cp.db.event.findMany({ where: { type: 'security.codec.refused' }, orderBy: { seq: 'asc' } });

  it('decodes what the control plane sealed, encodes what it decodes, for a root operator', async () => {
    const values = [{ note: marker }, 'text', 42];
    const encoded = await t.root.request<{ payloads: PayloadJson[] }>('POST', encodePath, {
      payloads: values.map((v) => toJson(defaultPayloadConverter.toPayload(v))),
    });
    expect(encoded.status).toBe(200);
    expect(encoded.body.payloads.map((p) => p.metadata?.encoding)).toEqual([SEALED_B64, SEALED_B64, SEALED_B64]);
    expect(JSON.stringify(encoded.body)).not.toContain(marker);
    const decoded = await t.root.request<{ payloads: PayloadJson[] }>('POST', decodePath, encoded.body, { 'x-namespace': t.config.temporal.namespace });
    expect(decoded.status).toBe(200);
    expect(decoded.body.payloads.map((p) => defaultPayloadConverter.fromPayload(fromJson(p)))).toEqual(values);
    // The workflow's own sealed input, as the Web UI sends it, opens.
    const started = payloadsIn(JSON.parse(await showHistory())).find((p) => p.at.includes('workflowExecutionStartedEventAttributes.input'));
    const input = await t.root.request<{ payloads: PayloadJson[] }>('POST', decodePath, { payloads: [started?.payload] });
    expect(JSON.stringify(defaultPayloadConverter.fromPayload(fromJson(input.body.payloads[0] ?? {})))).toContain(marker);
    // Payloads that were never sealed pass through.
    const plain = toJson(defaultPayloadConverter.toPayload({ plain: true }));
    expect((await t.root.request<{ payloads: PayloadJson[] }>('POST', decodePath, { payloads: [plain] })).body.payloads).toEqual([plain]);
  });

  it("no credential is 401; a refused credential, a tenant's operator and a missing permission are refusals with events", async () => {
    const sealed = (await t.root.call<{ payloads: PayloadJson[] }>('POST', encodePath, { payloads: [toJson(defaultPayloadConverter.toPayload(marker))] }))
      .payloads;
    const before = (await codecEvents()).length;

    const anonymous = await t.anonymous.request<{ error: { code: string; message: string } }>('POST', decodePath, { payloads: sealed });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.message).toContain('/console/sign-in');
    // Refused before its body is read: a body past the limit is still a 401.
    expect((await t.anonymous.request('POST', decodePath, { payloads: [{ data: 'A'.repeat(5 * 1024 * 1024) }] })).status).toBe(401);
    expect(JSON.stringify(anonymous.body)).not.toContain(marker);
    expect((await codecEvents()).length).toBe(before); // nothing presented: no event

    const forged = await t.anonymous.request('POST', decodePath, { payloads: sealed }, { authorization: 'Bearer ifk_notacredential.secretsecretsecretsecret' });
    expect(forged.status).toBe(401);

    await t.root.call('POST', '/v1/tenants', { id: 'sealco', name: 'Sealco' });
    const tenantOperator = await t.root.call<{ credential: string; id: string }>('POST', '/v1/credentials', {
      tenantId: 'sealco',
      name: 'sealco operator',
      permissions: ['compute:nodes:read', 'compute:nodes:provision', 'compute:events:read'],
    });
    const asTenant = await t.root
      .withCredential(tenantOperator.credential)
      .request<{ error: { code: string; details: { reason: string } } }>('POST', decodePath, { payloads: sealed });
    expect(asTenant.status).toBe(403);
    expect(asTenant.body.error.details.reason).toBe('not-platform-operator');

    const rootReader = await t.root.call<{ credential: string; id: string }>('POST', '/v1/credentials', {
      tenantId: 'root',
      name: 'events only',
      permissions: ['compute:events:read'],
    });
    const lacking = await t.root
      .withCredential(rootReader.credential)
      .request<{ error: { code: string; details: { reason: string } } }>('POST', decodePath, { payloads: sealed });
    expect(lacking.status).toBe(403);
    expect(lacking.body.error.details.reason).toBe('permission-missing');

    const events = (await codecEvents()).slice(before);
    expect(events.map((e) => [e.tenantId, (e.data as { reason: string }).reason])).toEqual([
      ['root', 'unauthenticated'],
      ['sealco', 'not-platform-operator'],
      ['root', 'permission-missing'],
    ]);
    expect(events[1]?.subjectId).toBe(tenantOperator.id);
    for (const event of events) expect(JSON.stringify(event)).not.toMatch(/ifk_|secretsecret/);
  });

  it('a console session is a credential: signed in it decodes, signed out or revoked it is refused', async () => {
    const operator = await t.root.call<{ credential: string; id: string }>('POST', '/v1/credentials', {
      tenantId: 'root',
      name: 'web ui operator',
      permissions: ['compute:nodes:read'],
    });
    const signInPage = await fetch(`${t.cp.url}/console/sign-in`);
    const formCookie = (signInPage.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const formToken = /name="csrf" value="([^"]+)"/.exec(await signInPage.text())?.[1] ?? '';
    const signedIn = await fetch(`${t.cp.url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
      body: new URLSearchParams({ csrf: formToken, credential: operator.credential }).toString(),
    });
    expect(signedIn.status).toBe(303);
    const sessionCookie =
      signedIn.headers
        .getSetCookie()
        .map((c) => c.split(';')[0] ?? '')
        .find((c) => c.startsWith(`${SESSION_COOKIE}=`)) ?? '';
    expect(sessionCookie).not.toBe('');

    const sealed = (await t.root.call<{ payloads: PayloadJson[] }>('POST', encodePath, { payloads: [toJson(defaultPayloadConverter.toPayload(marker))] }))
      .payloads;
    const asBrowser = (cookie: string) =>
      fetch(`${t.cp.url}${decodePath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-namespace': t.config.temporal.namespace, origin: webUi(), cookie },
        body: JSON.stringify({ payloads: sealed }),
      });
    const decoded = await asBrowser(sessionCookie);
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe(webUi());
    expect(decoded.headers.get('access-control-allow-credentials')).toBe('true');
    expect(decoded.headers.get('cache-control')).toBe('no-store');
    expect(JSON.stringify(await decoded.json())).toContain(Buffer.from(JSON.stringify(marker)).toString('base64'));

    expect((await asBrowser(`${SESSION_COOKIE}=not-a-session`)).status).toBe(401);
    await t.root.call('POST', `/v1/credentials/${operator.id}/revoke`, { tenantId: 'root' });
    const revoked = await asBrowser(sessionCookie);
    expect(revoked.status).toBe(401);
    const last = (await codecEvents()).at(-1);
    expect(last?.data).toMatchObject({ code: 'UNAUTHENTICATED', origin: webUi() });
  });

  it('CORS: a preflight from the Web UI is answered with credentials allowed; another origin is refused', async () => {
    const preflight = (origin: string) =>
      fetch(`${t.cp.url}${decodePath}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
      });
    const allowed = await preflight(webUi());
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(webUi());
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-allow-methods')).toBe('POST');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('x-namespace');

    const other = await preflight('http://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    const before = (await codecEvents()).length;
    // Without a credential a foreign page learns only that it has none (and records nothing).
    expect((await t.anonymous.request('POST', decodePath, { payloads: [] }, { origin: 'http://evil.example' })).status).toBe(401);
    const cross = await t.root.request<{ error: { details: { reason: string } } }>('POST', decodePath, { payloads: [] }, { origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    expect(cross.body.error.details.reason).toBe('origin-not-allowed');
    expect(cross.headers.get('access-control-allow-origin')).toBeNull();
    expect((await codecEvents()).slice(before).map((e) => [e.subjectId, (e.data as { reason: string }).reason])).toEqual([
      [parseBearer(CREDENTIAL_SCHEME, t.cp.rootCredential.bearer)?.id, 'origin-not-allowed'],
    ]);
  });

  it('bounds its input: INVALID_INPUT with the path for too many payloads, bad base64, a tampered payload, another namespace, a body too large', async () => {
    const sealed =
      (await t.root.call<{ payloads: PayloadJson[] }>('POST', encodePath, { payloads: [toJson(defaultPayloadConverter.toPayload('x'))] })).payloads[0] ?? {};
    const refused = async (body: unknown, headers: Record<string, string> = {}) => {
      const answer = await t.root.request<{ error: { code: string; message: string; details: { path: string } } }>('POST', decodePath, body, headers);
      expect(answer.status).toBe(400);
      return answer.body.error;
    };
    expect((await refused({ payloads: Array.from({ length: 513 }, () => ({ data: '' })) })).details.path).toBe('payloads');
    expect((await refused({ payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'not base64!' }] })).details.path).toBe('payloads[0].data');
    expect((await refused({ payloads: [{ metadata: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, ''])) }] })).details.path).toBe(
      'payloads[0].metadata',
    );
    expect((await refused({ nothing: [] })).message).toContain('nothing');
    expect((await refused({ payloads: [], unexpected: 1 })).message).toContain('unexpected');
    const flipped = Buffer.from(sealed.data ?? '', 'base64');
    flipped[15] = (flipped[15] ?? 0) ^ 1;
    const tampered = await refused({ payloads: [{ data: '' }, { ...sealed, data: flipped.toString('base64') }] });
    expect(tampered).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'payloads[1]' } });
    const unknownKey = await refused({
      payloads: [{ ...sealed, metadata: { ...sealed.metadata, [KEY_ID_METADATA]: Buffer.from('hk-gone').toString('base64') } }],
    });
    expect(unknownKey).toMatchObject({ code: 'INVALID_CONFIG', details: { path: 'payloads[0]' } });
    expect(unknownKey.message).toContain('hk-gone');
    expect((await refused({ payloads: [] }, { 'x-namespace': 'someone-else' })).details.path).toBe('headers.x-namespace');
    expect((await refused({ payloads: [{ data: 'A'.repeat(5 * 1024 * 1024) }] })).details.path).toBe('body');
    // Still up. No payloads at all is protobuf JSON's empty list (the temporal CLI's query without arguments).
    expect((await t.root.request('POST', decodePath, { payloads: [] })).status).toBe(200);
    expect(await t.root.call('POST', encodePath, {})).toEqual({ payloads: [] });
    // An empty X-Namespace is the temporal CLI's when --namespace is left to its default.
    expect((await t.root.request('POST', decodePath, { payloads: [] }, { 'x-namespace': '' })).status).toBe(200);
  });
});
