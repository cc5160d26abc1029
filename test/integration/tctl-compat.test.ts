// The tctl compatibility command (.tools/bin/tctl → scripts/tctl-compat.mjs) against the
// suite's Temporal dev server: a runbook's tctl forms reach a real provision run through
// `temporal` (signal, query, show, list, describe), and what it cannot translate is refused
// with exit code 2 and the `temporal` command to use instead. Histories are sealed: the calls
// carry the codec an operator sets (TEMPORAL_CODEC_ENDPOINT / TEMPORAL_CODEC_AUTH, the API's
// endpoint and a root credential; docs/signals.md), and without it a query answers ciphertext.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../services/ids';
import type { ProvisionStatus } from '../../core/plan';
import { CODEC_PATH, SEALED_ENCODING } from '../../services/sealing';
import { toolPath } from '../../stack/tools';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { createNode, until } from '../helpers/provision';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const tctlBin = toolPath('tctl');
let t: TestControlPlane;
let address: string;
/** What an operator exports for the CLI to read sealed payloads: the API's codec endpoint and a root credential. */
let codec: { TEMPORAL_CODEC_ENDPOINT: string; TEMPORAL_CODEC_AUTH: string };

function tctl(args: string[], env: Record<string, string> = {}, withCodec = true): Promise<Run> {
  // No TEMPORAL_CLI_* or TEMPORAL_CODEC_* from the caller's shell: each call says where it goes.
  const {
    TEMPORAL_CLI_ADDRESS: _address,
    TEMPORAL_CLI_NAMESPACE: _namespace,
    TEMPORAL_CODEC_ENDPOINT: _endpoint,
    TEMPORAL_CODEC_AUTH: _auth,
    ...base
  } = process.env;
  return new Promise((resolve) => {
    execFile(tctlBin, args, { env: { ...base, ...(withCodec ? codec : {}), ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function tctlOk(args: string[], env?: Record<string, string>, withCodec?: boolean): Promise<string> {
  const run = await tctl(args, env, withCodec);
  if (run.code !== 0) throw new Error(`tctl ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}

/** `temporal workflow query --output json` answers `{ queryResult: [value] }`, empty lists as null. */
function queryResult(stdout: string): ProvisionStatus {
  const [status] = (JSON.parse(stdout) as { queryResult: [ProvisionStatus] }).queryResult;
  return { ...status, history: status.history ?? [], rejectedSignals: status.rejectedSignals ?? [] };
}

const statusOf = async (workflowId: string): Promise<ProvisionStatus> =>
  queryResult(await tctlOk(['--address', address, 'workflow', 'query', '-w', workflowId, '--qt', 'status', '--output', 'json']));

/** A provision run whose first step waits for an operator's confirmMac: it stays running. */
async function startWaitingRun(): Promise<string> {
  const nodeId = newId('node');
  await createNode(t.cp.db, { nodeId, siteId: 'site_tctl' });
  await t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id: 'tctl-abort',
      version: 1,
      target: 'metal',
      steps: [{ use: 'event.append', with: { message: 'confirmed' }, await: 'confirmMac', timeout: '2m' }],
      cleanup: [{ use: 'event.append', with: { message: 'cleaned up' } }],
    },
  });
  const { workflowId } = await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/tctl-abort/runs', {
    tenantId: 'root',
    nodeId,
    provisionState: 'inspecting',
  });
  await until(
    () => statusOf(workflowId),
    (s) => s.waitingFor?.startsWith('confirmMac') === true,
    20_000,
    'the confirmMac wait',
  );
  return workflowId;
}

beforeAll(async () => {
  if (!existsSync(tctlBin)) throw new Error(`${tctlBin} is missing: run \`npm run setup\` (it links the tctl compatibility command)`);
  t = await startTestControlPlane();
  address = t.config.temporal.address;
  codec = { TEMPORAL_CODEC_ENDPOINT: `${t.cp.url}${CODEC_PATH}`, TEMPORAL_CODEC_AUTH: `Bearer ${t.cp.rootCredential.bearer}` };
});
afterAll(async () => t?.close());

describe('tctl compatibility command', () => {
  it("runs a runbook's tctl forms through temporal: signal, query, show, list, describe", async () => {
    const workflowId = await startWaitingRun();

    // A malformed MAC through the signal is refused; the status query shows why.
    await tctlOk(['--address', address, 'wf', 'signal', '-w', workflowId, '-n', 'confirmMac', '-i', '"not-a-mac"']);
    const rejected = await until(
      () => statusOf(workflowId),
      (s) => s.rejectedSignals.length === 1,
      10_000,
      'the rejected confirmMac',
    );
    expect(rejected.rejectedSignals[0]).toMatchObject({ name: 'confirmMac', reason: expect.stringMatching(/\S/) });

    // abort with tctl's global --ns and long flag names: the run fails ABORTED with the reason.
    await tctlOk([
      '--address',
      address,
      '--ns',
      'default',
      'workflow',
      'signal',
      '--workflow_id',
      workflowId,
      '--name',
      'abort',
      '--input',
      '"operator said so"',
    ]);
    const error = await t.cp.temporal.workflow
      .getHandle(workflowId)
      .result()
      .catch((e: unknown) => e);
    expect(String((error as WorkflowFailedError).cause?.message)).toBe('aborted: operator said so');
    // -q as the query type too (tctl's is --qt/--query_type); the address from TEMPORAL_CLI_ADDRESS.
    const final = queryResult(await tctlOk(['workflow', 'query', '-w', workflowId, '-q', 'status', '--output', 'json'], { TEMPORAL_CLI_ADDRESS: address }));
    expect(final).toMatchObject({ phase: 'failed', abortReason: 'operator said so' });
    expect(final.history.map((h) => h.key)).toEqual(['steps[0]', 'cleanup[0]']);
    // Without the codec, the same answer is ciphertext: the CLI shows the sealed payload as it is.
    const sealed = await tctlOk(['--address', address, 'workflow', 'query', '-w', workflowId, '--qt', 'status', '--output', 'json'], {}, false);
    const [payload] = (JSON.parse(sealed) as { queryResult: { payloads: Array<{ metadata: Record<string, string> }> } }).queryResult.payloads;
    expect(Buffer.from(payload?.metadata.encoding ?? '', 'base64').toString()).toBe(SEALED_ENCODING);
    expect(sealed).not.toContain('operator said so');

    // show: the history holds both signals, as text and as JSON (and in tctl's --output_filename).
    const shown = await tctlOk(['--address', address, 'workflow', 'show', '-w', workflowId]);
    expect(shown).toContain('WorkflowExecutionSignaled');
    const history = JSON.parse(await tctlOk(['--address', address, 'workflow', 'show', '-w', workflowId, '--output', 'json'])) as {
      events: Array<{ eventType: string; workflowExecutionSignaledEventAttributes?: { signalName: string } }>;
    };
    const signals = history.events
      .filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED')
      .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName);
    expect(signals).toEqual(['confirmMac', 'abort']);
    const file = path.join(t.config.dataDir, 'history.json');
    await tctlOk(['--address', address, 'workflow', 'show', '-w', workflowId, '--of', file]);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { events: unknown[] }).events).toHaveLength(history.events.length);

    // list: a visibility query, and tctl's own filters (closed runs unless --open).
    const listed = await until(
      async () =>
        JSON.parse(await tctlOk(['--address', address, 'workflow', 'list', '-q', `WorkflowId="${workflowId}"`, '--output', 'json'])) as Array<{
          execution: { workflowId: string };
          status: string;
        }>,
      (rows) => rows.length === 1 && rows[0]?.status === 'WORKFLOW_EXECUTION_STATUS_FAILED',
      10_000,
      'the failed run in visibility',
    );
    expect(listed[0]?.execution.workflowId).toBe(workflowId);
    expect(await tctlOk(['--address', address, 'wf', 'list', '-w', workflowId, '-s', 'failed'])).toContain(workflowId);
    expect(await tctlOk(['--address', address, 'wf', 'list', '--open', '-w', workflowId])).not.toContain(workflowId);

    // describe prints JSON, as tctl did.
    const description = JSON.parse(await tctlOk(['--address', address, 'workflow', 'describe', '-w', workflowId])) as {
      workflowExecutionInfo: { execution: { workflowId: string }; status: string };
    };
    expect(description.workflowExecutionInfo).toMatchObject({ execution: { workflowId }, status: 'WORKFLOW_EXECUTION_STATUS_FAILED' });
  });

  it("passes temporal's failures through: its exit code and its message", async () => {
    const run = await tctl(['--address', address, '--ns', 'no-such-namespace', 'workflow', 'describe', '-w', 'node:nobody']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no-such-namespace/);
  });

  it('refuses what it cannot translate with exit code 2, naming it and the temporal command to use', async () => {
    const refusals: Array<[string[], RegExp]> = [
      [['workflow', 'start', '--tq', 'q', '--wt', 'provision'], /`tctl workflow start` is not supported.*`temporal workflow start`/],
      [['namespace', 'list'], /`tctl namespace` is not supported.*`temporal operator namespace`/],
      [
        ['workflow', 'signal', '-w', 'node:x', '-n', 'abort', '--frobnicate', '1'],
        /`tctl workflow signal` has no flag --frobnicate.*`temporal workflow signal`/,
      ],
      [['workflow', 'show', '-w', 'node:x', '--print_datetime'], /`tctl workflow show` has no flag --print_datetime.*`temporal workflow show`/],
      [['--auth', 'x', 'workflow', 'list'], /`tctl` has no flag --auth/],
      [['workflow', 'signal', '-w', 'node:x', '-i', '"reason"'], /`tctl workflow signal` needs -n\/--name/],
      [['workflow', 'query', '-w', 'node:x'], /`tctl workflow query` needs --qt\/--query_type/],
      [['workflow', 'describe', 'node:x'], /takes no argument "node:x".*--workflow-id/],
      [['workflow', 'signal', '-w'], /-w needs a value/],
    ];
    for (const [args, message] of refusals) {
      const run = await tctl(['--address', address, ...args]);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(run.stderr).toMatch(message);
    }
  });
});
