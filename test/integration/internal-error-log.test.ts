// An INTERNAL answer points at a log that exists (issue 13): by default the API logs into
// `api.log` in its data dir, owner-only (0600, an existing wider file tightened), redacted;
// the answer names that file and the request id, and the file holds the cause under that id,
// never a bearer. The failure is a real one: the database lost a table under the API.
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_LOG_FILE } from '../../api/log-file';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
let logFile: string;

beforeAll(async () => {
  const config = await testConfig();
  logFile = path.join(config.dataDir, API_LOG_FILE);
  // What an earlier version may have left: a world-readable log.
  writeFileSync(logFile, '');
  chmodSync(logFile, 0o644);
  t = await startTestControlPlane({ config, worker: false });
});
afterAll(async () => t?.close());

/** Log lines are written asynchronously: read once the line for `requestId` is there. */
async function logLinesFor(requestId: string): Promise<Array<Record<string, unknown>>> {
  for (let i = 0; i < 50; i++) {
    const lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = lines.filter((l) => l.reqId === requestId);
    if (mine.some((l) => l.msg === 'unhandled error')) return mine;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no log line for ${requestId} in ${logFile}`);
}

describe('the API log', () => {
  it('is a file in the data dir, owner-only', () => {
    expect(existsSync(logFile)).toBe(true);
    expect(statSync(logFile).mode & 0o777).toBe(0o600);
  });

  it('is what an INTERNAL answer names, and holds the cause under its request id, redacted', async () => {
    const created = await t.root.call<{ credential: string }>('POST', '/v1/credentials', { tenantId: 'root', name: 'log-check', permissions: ['*'] });
    // A real fault under the API: the table the route reads is gone.
    await t.cp.db.$executeRawUnsafe('ALTER TABLE "Pool" RENAME TO "PoolGone"');
    try {
      const res = await fetch(new URL('/v1/pools?tenantId=root', t.cp.url), {
        headers: { authorization: `Bearer ${created.credential}`, 'x-request-id': 'internal-log-1' },
      });
      expect(res.status).toBe(500);
      const body = (await res.json()) as { error: { code: string; message: string; details: Record<string, unknown> } };
      expect(body.error.code).toBe('INTERNAL');
      expect(body.error.message).toContain(logFile);
      expect(body.error.message).toContain('internal-log-1');
      expect(body.error.details).toEqual({ requestId: 'internal-log-1' });
      // The answer carries no cause (no table name, no stack).
      expect(JSON.stringify(body)).not.toMatch(/Pool|at .*\.ts/);

      const lines = await logLinesFor('internal-log-1');
      const failure = lines.find((l) => l.msg === 'unhandled error') as { err?: { message?: string } };
      expect(failure.err?.message).toMatch(/Pool/);
      const text = readFileSync(logFile, 'utf8');
      for (const bearer of [created.credential, t.cp.rootCredential.bearer]) expect(text).not.toContain(bearer.split('.')[1]);
      expect(statSync(logFile).mode & 0o777).toBe(0o600);
    } finally {
      await t.cp.db.$executeRawUnsafe('ALTER TABLE "PoolGone" RENAME TO "Pool"');
    }
  });
});
