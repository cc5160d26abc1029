// The operator's path with the real `ironflow` command: trust a key on the host
// (image-signers, straight to the database), sign locally, register, list, promote, revoke.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { verifyImageForUse } from '../../services/images/catalog';
import type { ImageView } from '../../core/schemas/images';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
let env: Record<string, string>;
let dir: string;
const sha256 = 'e3'.repeat(32);

beforeAll(async () => {
  t = await startTestControlPlane();
  // The host commands read the same configuration as the server: its database and data dir.
  env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer, DATABASE_URL: t.config.databaseUrl, IRONFLOW_DATA_DIR: t.config.dataDir };
  dir = mkdtempSync(path.join(inject('runDir'), 'images-cli-'));
  execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', path.join(dir, 'signer.pem')]);
  execFileSync('openssl', ['pkey', '-in', path.join(dir, 'signer.pem'), '-pubout', '-out', path.join(dir, 'signer.pub.pem')]);
});
afterAll(async () => t?.close());

const cli = (...args: string[]) => runCli(args, env as { apiUrl: string });
/** Each `ironflow` run is a process of its own (seconds each in a slow hour): a test's dozen took 56–60 s in CI once. */
const CLI_RUNS_TIMEOUT_MS = 180_000;

describe('ironflow images and image-signers', { timeout: CLI_RUNS_TIMEOUT_MS }, () => {
  it('signs, registers, lists, promotes, and stops a revoked signer', async () => {
    const added = await cli(
      'image-signers',
      'add',
      '--tenant',
      'root',
      '--id',
      'platform-2026',
      '--public-key',
      path.join(dir, 'signer.pub.pem'),
      '--format',
      'json',
    );
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ tenantId: 'root', id: 'platform-2026', algorithm: 'ed25519', revokedAt: null });

    const ref = 'ubuntu-24.04-server@2026.09';
    const fields = ['--kind', 'os', '--ref', ref, '--disk-format', 'raw', '--compression', 'zstd', '--sha256', sha256];
    const signedOut = await cli('images', 'sign', '--key', path.join(dir, 'signer.pem'), ...fields);
    expect(signedOut.code, signedOut.stderr).toBe(0);
    const signature = signedOut.stdout.trim();
    expect(signature).toMatch(/^[A-Za-z0-9+/]{86}==$/); // 64 bytes of Ed25519

    const lone = await cli(
      'images',
      'register',
      '--tenant',
      'root',
      '--ref',
      ref,
      '--source',
      'https://images.example.com/u.raw.zst',
      '--disk-format',
      'raw',
      '--compression',
      'zstd',
      '--sha256',
      sha256,
      '--size',
      '3221225472',
      '--signature',
      signature,
    );
    expect(lone.code).toBe(1);
    expect(lone.stderr).toMatch(/signerId and signature go together/);

    const registered = await cli(
      'images',
      'register',
      '--tenant',
      'root',
      '--ref',
      ref,
      '--source',
      'https://images.example.com/ubuntu-24.04-server-2026.09.raw.zst',
      '--disk-format',
      'raw',
      '--compression',
      'zstd',
      '--sha256',
      sha256,
      '--size',
      '3221225472',
      '--signer',
      'platform-2026',
      '--signature',
      signature,
      '--format',
      'json',
    );
    expect(registered.code, registered.stderr).toBe(0);
    const image = JSON.parse(registered.stdout) as ImageView;
    expect(image).toMatchObject({ ref, verified: true, visibility: 'private', format: 'raw', sizeBytes: 3221225472 });

    const listed = await cli('images', 'list', '--tenant', 'root', '--kind', 'os');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+REF\s+KIND/);
    expect(listed.stdout).toContain(image.id);
    expect((await cli('images', 'list', '--tenant', 'root', '--kind', 'ramdisk')).stdout).not.toContain(image.id);

    const promoted = await cli('images', 'promote', image.id, '--tenant', 'root', '--format', 'json');
    expect(promoted.code, promoted.stderr).toBe(0);
    expect(JSON.parse(promoted.stdout).visibility).toBe('public');
    const got = await cli('images', 'get', image.id, '--tenant', 'root');
    expect(got.stdout).toMatch(/visibility\s+public/);

    const revoked = await cli('image-signers', 'revoke', 'platform-2026', '--tenant', 'root', '--format', 'json');
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout).revokedAt).toMatch(/^\d{4}-/);
    await expect(verifyImageForUse(t.cp.db, image.id)).rejects.toMatchObject({ code: 'INVALID_STATE', details: { reason: 'signature' } });
  });

  it('refuses a key of another algorithm and an unknown signer, naming the fix', async () => {
    execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', path.join(dir, 'rsa.pem')], { stdio: 'ignore' });
    execFileSync('openssl', ['pkey', '-in', path.join(dir, 'rsa.pem'), '-pubout', '-out', path.join(dir, 'rsa.pub.pem')]);
    const rsa = await cli('image-signers', 'add', '--tenant', 'root', '--id', 'rsa', '--public-key', path.join(dir, 'rsa.pub.pem'));
    expect(rsa.code).toBe(1);
    expect(rsa.stderr).toMatch(/INVALID_INPUT: image signers use Ed25519 or ECDSA P-256/);
    const signRsa = await cli(
      'images',
      'sign',
      '--key',
      path.join(dir, 'rsa.pem'),
      '--ref',
      'x@1',
      '--disk-format',
      'raw',
      '--compression',
      'none',
      '--sha256',
      sha256,
    );
    expect(signRsa.code).toBe(1);
    const missing = await cli('image-signers', 'revoke', 'nobody', '--tenant', 'root');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/NOT_FOUND/);
  });
});
