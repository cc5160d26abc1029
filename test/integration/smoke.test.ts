// The wiring: the API starts a workflow on the real Temporal dev server, the control-plane
// worker runs its activity, the activity writes a row, and the API reads it back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import type { SystemCheckView } from '../../core/schemas/system';

let t: TestControlPlane;
beforeAll(async () => {
  t = await startTestControlPlane();
});
afterAll(async () => t?.close());

async function until<T>(fn: () => Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await fn();
    if (done(value) || Date.now() - started > ms) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('dev stack wiring', () => {
  it('reports the database and Temporal healthy', async () => {
    const health = await t.anonymous.request<{ status: string; database: { ok: boolean }; temporal: { ok: boolean } }>('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body.database.ok).toBe(true);
    expect(health.body.temporal.ok).toBe(true);
    expect(health.headers.get('x-request-id')).toMatch(/.+/);
  });

  it('runs a workflow whose activity writes a row the API reads back', async () => {
    const started = await t.root.call<SystemCheckView>('POST', '/v1/system/checks', { tenantId: 'root' });
    expect(started.status).toBe('running');
    const finished = await until(
      () => t.root.call<SystemCheckView>('GET', `/v1/system/checks/${started.id}?tenantId=root`),
      (c) => c.status === 'succeeded',
    );
    expect(finished.status).toBe('succeeded');
    expect(finished.workerId).toMatch(/:\d+$/);
    // The workflow's history is in Temporal, and its result names the same worker.
    const result = await t.cp.temporal.workflow.getHandle(started.workflowId).result();
    expect(result).toEqual({ checkId: started.id, workerId: finished.workerId });
    // The activity's event was appended with its change.
    const page = await t.root.call<{ events: Array<{ type: string; subjectId: string }> }>('GET', '/v1/events?tenantId=root&type=system.check');
    expect(page.events.map((e) => e.subjectId)).toContain(started.id);
  });
});
