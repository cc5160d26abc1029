// The `ironflow` command against a real server: status (with the wiring check), events,
// output formats, and errors that name the fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { runCli } from '../helpers/cli';

let t: TestControlPlane;
let env: { apiUrl: string; credential: string };
beforeAll(async () => {
  t = await startTestControlPlane();
  env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
});
afterAll(async () => t?.close());

describe('ironflow status', () => {
  it('reports health and runs the wiring check end to end', async () => {
    const out = await runCli(['status', '--check', '--format', 'json'], env);
    expect(out.code, out.stderr).toBe(0);
    const status = JSON.parse(out.stdout) as Record<string, string>;
    expect(status.status).toBe('ok');
    expect(status.database).toMatch(/^ok/);
    expect(status.temporal).toMatch(/^ok/);
    expect(status.check).toMatch(/^ok: system-check:chk_.* ran on worker /);
  });

  it('says how to fix an unreachable API', async () => {
    const out = await runCli(['status'], { apiUrl: 'http://127.0.0.1:9', credential: '' });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/npm start/);
  });
});

describe('ironflow events', () => {
  it('prints the log as a table and as JSON', async () => {
    await t.root.call('POST', '/v1/tenants', { id: 'cli-co', name: 'CLI Co' });
    const table = await runCli(['events', '--tenant', 'cli-co'], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^SEQ\s+TIME\s+TYPE/);
    expect(table.stdout).toContain('tenant.created');
    const json = await runCli(['events', '--tenant', 'cli-co', '--format', 'json'], env);
    expect((JSON.parse(json.stdout) as Array<{ type: string }>).map((e) => e.type)).toContain('tenant.created');
  });

  it('refuses a bad flag with its name', async () => {
    const out = await runCli(['events', '--limit', '100000'], env);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/INVALID_INPUT: --limit/);
    const unknown = await runCli(['events', '--colour', 'red'], env);
    expect(unknown.stderr).toMatch(/unknown flag --colour/);
  });
});
