import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecretKey, SecretStore } from '../../services/secret-store';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
beforeAll(async () => {
  t = await startTestControlPlane({ worker: false });
});
afterAll(async () => t?.close());

describe('the secret store', () => {
  it('keeps only ciphertext at rest and opens it with the key', async () => {
    const ref = await t.cp.secrets.put(t.cp.db, { tenantId: 'root', purpose: 'bmc', value: 'hunter2-bmc-password' });
    expect(ref).toMatch(/^sec_/);
    const row = await t.cp.db.secret.findUniqueOrThrow({ where: { id: ref } });
    expect(Buffer.from(row.ciphertext).toString('utf8')).not.toContain('hunter2');
    expect(await t.cp.secrets.get(t.cp.db, ref)).toBe('hunter2-bmc-password');
  });

  it('writes its key file 0600', () => {
    const mode = statSync(path.join(t.config.dataDir, 'secret-store.key')).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it('refuses a ciphertext moved to another row, and another key', async () => {
    const a = await t.cp.secrets.put(t.cp.db, { tenantId: 'root', purpose: 'x', value: 'alpha' });
    const b = await t.cp.secrets.put(t.cp.db, { tenantId: 'root', purpose: 'x', value: 'bravo' });
    const rowA = await t.cp.db.secret.findUniqueOrThrow({ where: { id: a } });
    await t.cp.db.secret.update({ where: { id: b }, data: { ciphertext: rowA.ciphertext, nonce: rowA.nonce } });
    await expect(t.cp.secrets.get(t.cp.db, b)).rejects.toThrow(/does not open/);
    const otherKey = new SecretStore(loadSecretKey('/nonexistent', { IRONFLOW_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }));
    await expect(otherKey.get(t.cp.db, a)).rejects.toThrow(/does not open/);
    // The error never carries the value.
    await expect(otherKey.get(t.cp.db, a)).rejects.not.toThrow(/alpha/);
  });

  it('forgets an expired or deleted secret', async () => {
    const gone = await t.cp.secrets.put(t.cp.db, { tenantId: 'root', purpose: 'x', value: 'v', expiresAt: new Date(Date.now() - 1) });
    await expect(t.cp.secrets.get(t.cp.db, gone)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const deleted = await t.cp.secrets.put(t.cp.db, { tenantId: 'root', purpose: 'x', value: 'v' });
    await t.cp.secrets.delete(t.cp.db, deleted);
    await expect(t.cp.secrets.get(t.cp.db, deleted)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('refuses a key of the wrong size with the fix', () => {
    expect(() => loadSecretKey('/nonexistent', { IRONFLOW_SECRET_KEY: 'c2hvcnQ=' })).toThrow(/openssl rand -base64 32/);
  });
});
