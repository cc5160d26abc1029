// A run's patch level (workflows/patches.ts) against the real Temporal dev server: the same
// provision plan started at several levels. A run that knows a patch takes it without a marker
// or a TemporalChangeVersion upsert; a run that does not (begun before levels, or before the
// patch) records the marker through patched(), as Temporal's SDK does. A run started by code
// that knows more patches than the worker's waits for a worker that knows them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_PATCH_LEVEL, WORKFLOW_PATCHES } from '../../core/workflow-patches';
import { compileProfile } from '../../profiles/compiler';
import { provision } from '../../workflows';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { createNode, until } from '../helpers/provision';

let t: TestControlPlane;
const nodeId = `node_levels${randomBytes(5).toString('hex')}`;
const plan = compileProfile({ id: 'patch-levels', version: 1, target: 'metal', steps: [{ use: 'event.append', with: { message: 'level' } }] }, 'root');

beforeAll(async () => {
  t = await startTestControlPlane();
  await createNode(t.cp.db, { nodeId, siteId: 'site_levels' });
});
afterAll(async () => t?.close());

/** Runs the plan at `level` to its end; the patch ids its history marked and the search attributes it upserted. */
async function runAt(level: number | undefined): Promise<{ markedPatches: string[]; upserted: string[] }> {
  const handle = await t.cp.temporal.workflow.start(provision, {
    workflowId: `patch-levels-${String(level)}-${randomBytes(4).toString('hex')}`,
    taskQueue: t.config.controlQueue,
    args: [plan, { tenantId: 'root', nodeId, siteId: 'site_levels', provisionState: 'inspecting', labels: {} }, level],
  });
  await handle.result();
  const { events } = await handle.fetchHistory();
  return {
    markedPatches: (events ?? []).flatMap((e) => {
      const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
      return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
    }),
    upserted: (events ?? []).flatMap((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {})),
  };
}

describe('a run’s patch level', () => {
  it('a run begun before levels goes through patched(): a marker and a TemporalChangeVersion upsert', async () => {
    expect(await runAt(undefined)).toEqual({ markedPatches: ['memo-without-step'], upserted: ['TemporalChangeVersion'] });
  });

  it('a run whose level includes a patch takes it without either', async () => {
    expect(WORKFLOW_PATCHES.indexOf('memo-without-step')).toBe(0);
    expect(await runAt(1)).toEqual({ markedPatches: [], upserted: [] });
    expect(await runAt(CURRENT_PATCH_LEVEL)).toEqual({ markedPatches: [], upserted: [] });
  });

  it('a run started by newer code waits for a worker that knows its level: its workflow task fails, the run goes on', async () => {
    const handle = await t.cp.temporal.workflow.start(provision, {
      workflowId: `patch-levels-newer-${randomBytes(4).toString('hex')}`,
      taskQueue: t.config.controlQueue,
      args: [plan, { tenantId: 'root', nodeId, siteId: 'site_levels', provisionState: 'inspecting', labels: {} }, CURRENT_PATCH_LEVEL + 1],
    });
    const failedTask = await until(
      async () => (await handle.fetchHistory()).events?.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.failure?.message,
      (message) => message !== undefined,
      20_000,
      'a failed workflow task',
    );
    expect(failedTask).toContain(`started at patch level ${CURRENT_PATCH_LEVEL + 1}`);
    expect(failedTask).toContain('upgrade the worker');
    // Not failed: it stays running for a newer worker.
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('the test is done with it');
  });
});
