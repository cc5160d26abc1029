// The image catalog through the real API and database: signed registration with real keys,
// visibility enforced by the table CHECK, promotion, reading, permissions, and the
// deploy-time re-verification against revocation and hand-edited rows.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyImageForUse, resolveImageRef } from '../../services/images/catalog';
import { addImageSigner, revokeImageSigner } from '../../services/images/signers';
import { imageSigningInput } from '../../core/images/signing-input';
import type { ImagePage, ImageView } from '../../core/schemas/images';
import type { ApiClient } from '../../cli/api-client';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

type ErrorBody = { error: { code: string; message: string; details: { path?: string; reason?: string } } };

let t: TestControlPlane;
let acme: ApiClient;
let globex: ApiClient;
let acmeReader: ApiClient;
const platformKey = generateKeyPairSync('ed25519');
const acmeKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
let digestCounter = 0;
const digest = () => (++digestCounter).toString(16).padStart(64, '0');

async function credential(tenantId: string, permissions: string[]): Promise<ApiClient> {
  const created = await t.root.call<{ credential: string }>('POST', '/v1/credentials', { tenantId, name: `${tenantId}-${permissions.join('+')}`, permissions });
  return t.root.withCredential(created.credential);
}

function imageInput(tenantId: string, ref: string, overrides: Record<string, unknown> = {}) {
  return {
    tenantId,
    ref,
    kind: 'os',
    format: 'raw',
    compression: 'zstd',
    sha256: digest(),
    sizeBytes: 3_221_225_472,
    source: `https://images.example.com/${ref}.raw.zst`,
    ...overrides,
  };
}

function signed(input: ReturnType<typeof imageInput>, signerId: string, key: KeyObject, encoding: 'der' | 'ieee-p1363' = 'der') {
  const data = imageSigningInput(input as { kind: string; ref: string; format: string; compression: string; sha256: string });
  const signature = key.asymmetricKeyType === 'ed25519' ? sign(null, data, key) : sign('sha256', data, { key, dsaEncoding: encoding });
  return { ...input, signerId, signature: signature.toString('base64') };
}

beforeAll(async () => {
  t = await startTestControlPlane();
  await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  await t.root.call('POST', '/v1/tenants', { id: 'globex', name: 'Globex' });
  acme = await credential('acme', ['compute:images:publish', 'compute:images:read']);
  globex = await credential('globex', ['compute:images:publish', 'compute:images:read']);
  acmeReader = await credential('acme', ['compute:images:read']);
  await addImageSigner(t.cp.db, { tenantId: 'root', id: 'platform-2026', publicKeyPem: pem(platformKey.publicKey) });
  await addImageSigner(t.cp.db, { tenantId: 'acme', id: 'acme-ci', publicKeyPem: pem(acmeKey.publicKey) });
});
afterAll(async () => t?.close());

describe('images.register', () => {
  it('registers an unsigned image private and unverified, and a replay returns it', async () => {
    const input = imageInput('acme', 'acme-dev@1');
    const first = await acme.request<ImageView>('POST', '/v1/images', input);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ ref: 'acme-dev@1', verified: false, visibility: 'private', signerId: null, sizeBytes: 3_221_225_472 });
    expect(first.body.id).toMatch(/^img_/);
    const again = await acme.request<ImageView>('POST', '/v1/images', input);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    const changed = await acme.request<ErrorBody>('POST', '/v1/images', { ...input, sha256: digest() });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('CONFLICT');
  });

  it('verifies Ed25519 against the platform allowlist and ECDSA (P1363 and DER) against the tenant', async () => {
    const platform = await acme.call<ImageView>('POST', '/v1/images', signed(imageInput('acme', 'ubuntu@1'), 'platform-2026', platformKey.privateKey));
    expect(platform).toMatchObject({ verified: true, signerId: 'platform-2026', signerTenantId: 'root' });
    const p1363 = await acme.call<ImageView>('POST', '/v1/images', signed(imageInput('acme', 'acme-os@1'), 'acme-ci', acmeKey.privateKey, 'ieee-p1363'));
    expect(p1363).toMatchObject({ verified: true, signerTenantId: 'acme' });
    const der = await acme.call<ImageView>('POST', '/v1/images', signed(imageInput('acme', 'acme-os@2'), 'acme-ci', acmeKey.privateKey, 'der'));
    expect(der.verified).toBe(true);
  });

  it('refuses a bad signature, a foreign signer and a lone signer or signature with INVALID_INPUT', async () => {
    const good = signed(imageInput('acme', 'acme-bad@1'), 'acme-ci', acmeKey.privateKey);
    const wrong = await acme.request<ErrorBody>('POST', '/v1/images', { ...good, sha256: digest() });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'signature' } });
    // acme's signer is not in globex's allowlist (nor the platform's).
    const foreign = await globex.request<ErrorBody>('POST', '/v1/images', { ...good, tenantId: 'globex' });
    expect(foreign.body.error.code).toBe('INVALID_INPUT');
    expect(foreign.body.error.message).toMatch(/no signer acme-ci/);
    const lone = await acme.request<ErrorBody>('POST', '/v1/images', { ...imageInput('acme', 'acme-lone@1'), signerId: 'acme-ci' });
    expect(lone.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'signature' } });
    expect((await acme.call<ImagePage>('GET', '/v1/images?tenantId=acme&limit=200')).images.map((i) => i.ref)).not.toContain('acme-bad@1');
  });

  it('checks the fields: lower-case digest, https:// or oci:// source, known format', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ sha256: 'AB'.repeat(32) }, 'sha256'],
      [{ source: 'http://images.example.com/x.raw' }, 'source'],
      [{ source: "https://x.example.com/a'b" }, 'source'],
      [{ format: 'vmdk' }, 'format'],
      [{ ref: 'no-version' }, 'ref'],
    ];
    for (const [override, field] of cases) {
      const res = await acme.request<ErrorBody>('POST', '/v1/images', imageInput('acme', 'acme-check@1', override));
      expect(res.status, JSON.stringify(override)).toBe(400);
      expect(res.body.error.details.path).toContain(field);
    }
    const oci = await acme.request<ImageView>(
      'POST',
      '/v1/images',
      imageInput('acme', 'acme-oci@1', { source: 'oci://registry.example.com/os/acme@sha256:' + 'c'.repeat(64) }),
    );
    expect(oci.status).toBe(201);
  });

  it('is compute:images:publish; reading is compute:images:read; another tenant is refused', async () => {
    const denied = await acmeReader.request<ErrorBody>('POST', '/v1/images', imageInput('acme', 'acme-denied@1'));
    expect(denied.status).toBe(403);
    expect((await acmeReader.request('GET', '/v1/images?tenantId=acme')).status).toBe(200);
    const cross = await globex.request<ErrorBody>('POST', '/v1/images', imageInput('acme', 'acme-cross@1'));
    expect(cross.status).toBe(403);
  });
});

describe('visibility', () => {
  it('the database refuses to make an unsigned image public, whatever the code does', async () => {
    const image = await acme.call<ImageView>('POST', '/v1/images', imageInput('acme', 'acme-check-constraint@1'));
    await expect(t.cp.db.$executeRaw`UPDATE "Image" SET "visibility" = 'public' WHERE "id" = ${image.id}`).rejects.toThrow(
      /CHECK|constraint|Image_unsigned_private/i,
    );
    const row = await t.cp.db.image.findUniqueOrThrow({ where: { id: image.id } });
    expect(row.visibility).toBe('private');
  });

  it('promote refuses an unsigned image and publishes a verified one to every tenant', async () => {
    const unsigned = await acme.call<ImageView>('POST', '/v1/images', imageInput('acme', 'acme-private@1'));
    const refused = await acme.request<ErrorBody>('POST', `/v1/images/${unsigned.id}/promote`, { tenantId: 'acme' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_STATE', details: { reason: 'unsigned' } });

    const image = await acme.call<ImageView>('POST', '/v1/images', signed(imageInput('acme', 'acme-shared@1'), 'platform-2026', platformKey.privateKey));
    expect((await globex.request('GET', `/v1/images/${image.id}?tenantId=globex`)).status).toBe(404);
    // Another tenant cannot promote it.
    expect((await globex.request('POST', `/v1/images/${image.id}/promote`, { tenantId: 'globex' })).status).toBe(404);
    const promoted = await acme.call<ImageView>('POST', `/v1/images/${image.id}/promote`, { tenantId: 'acme' });
    expect(promoted.visibility).toBe('public');
    expect((await globex.call<ImageView>('GET', `/v1/images/${image.id}?tenantId=globex`)).ref).toBe('acme-shared@1');
    const globexList = await globex.call<ImagePage>('GET', '/v1/images?tenantId=globex&limit=200');
    expect(globexList.images.map((i) => i.id)).toContain(image.id);
    expect(globexList.images.map((i) => i.id)).not.toContain(unsigned.id);
    expect(globexList.images.every((i) => i.tenantId === 'globex' || i.visibility === 'public')).toBe(true);
  });
});

describe('reading', () => {
  it('documents the routes in OpenAPI from the same schemas', async () => {
    const doc = await t.anonymous.call<{ paths: Record<string, Record<string, unknown>> }>('GET', '/docs/json');
    expect(Object.keys(doc.paths['/v1/images'] ?? {})).toEqual(expect.arrayContaining(['get', 'post']));
    expect(doc.paths['/v1/images/{imageId}/promote']?.post).toBeDefined();
  });

  it('lists by kind, pages by cursor, and refuses pages over 200', async () => {
    for (let i = 0; i < 5; i++) await globex.call('POST', '/v1/images', imageInput('globex', `globex-ramdisk@${i}`, { kind: 'ramdisk' }));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: ImagePage = await globex.call<ImagePage>('GET', `/v1/images?tenantId=globex&kind=ramdisk&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.images.length).toBeLessThanOrEqual(2);
      expect(page.images.every((i) => i.kind === 'ramdisk')).toBe(true);
      seen.push(...page.images.map((i) => i.ref));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([0, 1, 2, 3, 4].map((i) => `globex-ramdisk@${i}`));
    const tooMany = await globex.request<ErrorBody>('GET', '/v1/images?tenantId=globex&limit=201');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details.path).toContain('limit');
  });

  it("resolves a ref to the tenant's own image before a public one", async () => {
    const shared = await acme.call<ImageView>('POST', '/v1/images', signed(imageInput('acme', 'common@1'), 'platform-2026', platformKey.privateKey));
    await acme.call('POST', `/v1/images/${shared.id}/promote`, { tenantId: 'acme' });
    expect((await resolveImageRef(t.cp.db, 'globex', 'common@1'))?.id).toBe(shared.id);
    const own = await globex.call<ImageView>('POST', '/v1/images', imageInput('globex', 'common@1'));
    expect((await resolveImageRef(t.cp.db, 'globex', 'common@1'))?.id).toBe(own.id);
    expect(await resolveImageRef(t.cp.db, 'globex', 'missing@1')).toBeNull();
  });
});

describe('verifyImageForUse', () => {
  const expectRefusal = async (promise: Promise<unknown>, reason: 'unsigned' | 'signature') => {
    await expect(promise).rejects.toMatchObject({ code: 'INVALID_STATE', details: { reason } });
  };

  it('passes a verified image and refuses an unsigned one unless allowUnsigned covers it', async () => {
    const good = await acme.call<ImageView>('POST', '/v1/images', signed(imageInput('acme', 'use-good@1'), 'acme-ci', acmeKey.privateKey));
    expect((await verifyImageForUse(t.cp.db, good.id)).id).toBe(good.id);
    const unsignedOs = await acme.call<ImageView>('POST', '/v1/images', imageInput('acme', 'use-unsigned@1'));
    await expectRefusal(verifyImageForUse(t.cp.db, unsignedOs.id), 'unsigned');
    expect((await verifyImageForUse(t.cp.db, unsignedOs.id, { allowUnsigned: true })).id).toBe(unsignedOs.id);
    const unsignedRamdisk = await acme.call<ImageView>('POST', '/v1/images', imageInput('acme', 'use-ramdisk@1', { kind: 'ramdisk' }));
    await expectRefusal(verifyImageForUse(t.cp.db, unsignedRamdisk.id, { allowUnsigned: true }), 'unsigned');
  });

  it('refuses a row changed by hand, even with allowUnsigned', async () => {
    const columns: Array<[string, (id: string) => Promise<number>]> = [
      ['sha256', (id) => t.cp.db.$executeRaw`UPDATE "Image" SET "sha256" = ${'f'.repeat(64)} WHERE "id" = ${id}`],
      ['kind', (id) => t.cp.db.$executeRaw`UPDATE "Image" SET "kind" = 'ramdisk' WHERE "id" = ${id}`],
      ['ref', (id) => t.cp.db.$executeRaw`UPDATE "Image" SET "ref" = 'use-other@9' WHERE "id" = ${id}`],
      ['tenantId', (id) => t.cp.db.$executeRaw`UPDATE "Image" SET "tenantId" = 'globex' WHERE "id" = ${id}`],
      ['signature dropped', (id) => t.cp.db.$executeRaw`UPDATE "Image" SET "signature" = NULL, "signerId" = NULL WHERE "id" = ${id}`],
    ];
    for (const [name, tamper] of columns) {
      const image = await acme.call<ImageView>(
        'POST',
        '/v1/images',
        signed(imageInput('acme', `tamper-${name.replace(/\W/g, '').toLowerCase()}@1`), 'acme-ci', acmeKey.privateKey),
      );
      await verifyImageForUse(t.cp.db, image.id);
      expect(await tamper(image.id), name).toBe(1);
      await expectRefusal(verifyImageForUse(t.cp.db, image.id, { allowUnsigned: true }), 'signature');
    }
    // An unsigned row whose flag was set by hand is not trusted either.
    const unsigned = await acme.call<ImageView>('POST', '/v1/images', imageInput('acme', 'tamper-flag@1'));
    await t.cp.db.$executeRaw`UPDATE "Image" SET "verified" = true WHERE "id" = ${unsigned.id}`;
    await expectRefusal(verifyImageForUse(t.cp.db, unsigned.id, { allowUnsigned: true }), 'signature');
  });

  it('refuses images of a revoked signer, which keep their verified flag', async () => {
    const key = generateKeyPairSync('ed25519');
    await addImageSigner(t.cp.db, { tenantId: 'acme', id: 'acme-old', publicKeyPem: pem(key.publicKey) });
    const image = await acme.call<ImageView>('POST', '/v1/images', signed(imageInput('acme', 'revoked@1'), 'acme-old', key.privateKey));
    await verifyImageForUse(t.cp.db, image.id);
    await revokeImageSigner(t.cp.db, { tenantId: 'acme', id: 'acme-old' });
    expect((await acme.call<ImageView>('GET', `/v1/images/${image.id}?tenantId=acme`)).verified).toBe(true);
    await expectRefusal(verifyImageForUse(t.cp.db, image.id, { allowUnsigned: true }), 'signature');
    const promote = await acme.request<ErrorBody>('POST', `/v1/images/${image.id}/promote`, { tenantId: 'acme' });
    expect(promote.body.error).toMatchObject({ code: 'INVALID_STATE', details: { reason: 'signature' } });
    // A revoked signer can sign nothing new, and its id is never reused for another key.
    const fresh = await acme.request<ErrorBody>('POST', '/v1/images', signed(imageInput('acme', 'revoked@2'), 'acme-old', key.privateKey));
    expect(fresh.body.error.code).toBe('INVALID_INPUT');
    await expect(
      addImageSigner(t.cp.db, { tenantId: 'acme', id: 'acme-old', publicKeyPem: pem(generateKeyPairSync('ed25519').publicKey) }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('publishes security events for signer changes and records registrations', async () => {
    const events = await t.root.call<{ events: Array<{ type: string; subjectId: string }> }>('GET', '/v1/events?tenantId=acme&limit=500');
    const types = events.events.map((e) => `${e.type}:${e.subjectId}`);
    expect(types).toContain('security.image-signer.added:acme-ci');
    expect(types).toContain('security.image-signer.revoked:acme-old');
    expect(events.events.some((e) => e.type === 'image.registered')).toBe(true);
    expect(events.events.some((e) => e.type === 'image.promoted')).toBe(true);
  });
});
