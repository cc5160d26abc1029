// The `ironflow` command against a real server: status (with the wiring check), events,
// output formats, and errors that name the fix.
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
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

describe('where the credential comes from', () => {
  const dir = mkdtempSync(path.join(inject('runDir'), 'ironflow-cli-credential-'));
  const credentialFile = path.join(dir, 'credential');

  it('reads IRONFLOW_CREDENTIAL_FILE, and names the variable to use when IRONFLOW_CREDENTIAL holds a path', async () => {
    writeFileSync(credentialFile, `${env.credential}\n`, { mode: 0o600 });
    const fromFile = await runCli(['events', '--limit', '1', '--format', 'json'], { apiUrl: env.apiUrl, IRONFLOW_CREDENTIAL_FILE: credentialFile });
    expect(fromFile.code, fromFile.stderr).toBe(0);

    const pathInBearer = await runCli(['events', '--limit', '1'], { apiUrl: env.apiUrl, credential: credentialFile });
    expect(pathInBearer.code).toBe(1);
    expect(pathInBearer.stderr).toContain(
      `INVALID_INPUT: IRONFLOW_CREDENTIAL holds the credential itself, not a file: it names ${credentialFile}; set IRONFLOW_CREDENTIAL_FILE=${credentialFile} instead`,
    );
  });

  it('refuses a file that holds no credential, and both variables at once, without printing what they hold', async () => {
    const notACredential = path.join(dir, 'not-a-credential');
    writeFileSync(notACredential, 'hunter2-something-else\n');
    const wrongFile = await runCli(['events'], { apiUrl: env.apiUrl, IRONFLOW_CREDENTIAL_FILE: notACredential });
    expect(wrongFile.stderr).toMatch(/INVALID_INPUT: .*not-a-credential \(IRONFLOW_CREDENTIAL_FILE\) does not hold an Ironflow API credential/);
    expect(wrongFile.stderr).not.toContain('hunter2');
    const missing = await runCli(['events'], { apiUrl: env.apiUrl, IRONFLOW_CREDENTIAL_FILE: path.join(dir, 'absent') });
    expect(missing.stderr).toMatch(/absent \(IRONFLOW_CREDENTIAL_FILE\) does not exist/);
    const garbled = await runCli(['events'], { apiUrl: env.apiUrl, credential: 'hunter2-pasted-by-mistake' });
    expect(garbled.stderr).toMatch(/IRONFLOW_CREDENTIAL is not an Ironflow API credential/);
    expect(garbled.stderr).not.toContain('hunter2');
    const both = await runCli(['events'], { ...env, IRONFLOW_CREDENTIAL_FILE: credentialFile });
    expect(both.stderr).toMatch(/both IRONFLOW_CREDENTIAL and IRONFLOW_CREDENTIAL_FILE are set/);
  });

  it('names the source of a credential the API refuses', async () => {
    const revokedLooking = `${env.credential.slice(0, env.credential.lastIndexOf('.'))}.${'A'.repeat(43)}`;
    const out = await runCli(['events'], { apiUrl: env.apiUrl, credential: revokedLooking });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/UNAUTHENTICATED: unknown or revoked credential \(the credential came from IRONFLOW_CREDENTIAL\)/);
  });
});
