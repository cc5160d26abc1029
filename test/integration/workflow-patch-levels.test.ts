// A run's patch level (workflows/patches.ts) against the real Temporal dev server: the same
// provision plan started at several levels. A run that knows a patch takes it without a marker
// or a TemporalChangeVersion upsert; a run that does not (begun before levels, or before the
// patch) records the marker through patched(), as Temporal's SDK does.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_PATCH_LEVEL, WORKFLOW_PATCHES } from '../../core/workflow-patches';
import { compileProfile } from '../../profiles/compiler';
import { provision } from '../../workflows';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { createNode } from '../helpers/provision';

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
});
