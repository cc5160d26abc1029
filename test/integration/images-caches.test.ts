// Site caches on the control-plane side, against a real migrated database: image_locations
// derived from the site agents' cache reports, pins, eviction order, and the pre-warm list
// (cacheImages) from live pools' policy.prewarmImages. Sites, pools and agents are inserted
// as rows: their APIs belong to other modules.
import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTarget } from '../../core/database-target';
import { createDb, type Db } from '../../services/db';
import { promoteImage, registerImage } from '../../services/images/catalog';
import { evictionCandidates, imagesCachedAt, syncSiteImageLocations, touchImageLocation } from '../../core/images/locations';
import { prewarmDigests, siteCacheImages } from '../../services/images/prewarm';
import { addImageSigner, revokeImageSigner } from '../../services/images/signers';
import { imageSigningInput } from '../../core/images/signing-input';
import { newId } from '../../services/ids';
import type { ImageRegisterInput } from '../../core/schemas/images';
import { testConfig } from '../helpers/control-plane';

let db: Db;
const key = generateKeyPairSync('ed25519');
const hex = (n: number) => n.toString(16).padStart(64, '0');

async function site(ownerTenantId = 'root'): Promise<string> {
  const id = newId('site');
  await db.site.create({ data: { id, ownerTenantId, kind: 'shared', region: 'eu-1', callerId: 'test', idempotencyKey: id, requestHash: 'h' } });
  return id;
}
async function pool(tenantId: string, siteId: string, prewarmImages: unknown, deleted = false): Promise<string> {
  const id = newId('pool');
  await db.pool.create({ data: { id, tenantId, siteId, class: 'metal-host', policy: { prewarmImages } as object, deletedAt: deleted ? new Date() : null } });
  return id;
}
async function agent(siteId: string, deleted = false): Promise<string> {
  const id = newId('node');
  await db.node.create({ data: { id, tenantId: 'root', siteId, role: 'site', deletedAt: deleted ? new Date() : null } });
  return id;
}
function input(
  tenantId: string,
  ref: string,
  sha256: string,
  signed: boolean,
  source = `https://images.example.com/${tenantId}/${ref}.raw.zst`,
): ImageRegisterInput {
  const base = { tenantId, ref, kind: 'os' as const, format: 'raw' as const, compression: 'zstd' as const, sha256, sizeBytes: 1000, source };
  if (!signed) return base;
  return { ...base, signerId: 'platform', signature: sign(null, imageSigningInput(base), key.privateKey).toString('base64') };
}
const register = async (i: ImageRegisterInput) => (await registerImage(db, i)).image;

beforeAll(async () => {
  db = await createDb(databaseTarget(await testConfig()));
  for (const id of ['root', 'acme', 'globex']) await db.tenant.upsert({ where: { id }, create: { id, name: id }, update: {} });
  await addImageSigner(db, { tenantId: 'root', id: 'platform', publicKeyPem: key.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
});
afterAll(async () => db?.$disconnect());

describe('pre-warm (cacheImages)', () => {
  it('lists the verified images of live pools, resolved per pool owner, deduplicated by URL', async () => {
    const s = await site();
    const other = await site();
    const signedA = await register(input('acme', 'pw-a@1', hex(1), true));
    await register(input('acme', 'pw-unsigned@1', hex(2), false));
    const shared = await register(input('root', 'pw-shared@1', hex(3), true));
    await promoteImage(db, 'root', shared.id);
    // globex has its own pw-a@1 under the same URL as acme's: listed once.
    await register(input('globex', 'pw-a@1', hex(1), true, signedA.source));
    await pool('acme', s, ['pw-a@1', 'pw-unsigned@1', 'pw-missing@1', 'pw-shared@1']);
    await pool('globex', s, ['pw-a@1', 'pw-shared@1']);
    await pool('acme', s, ['pw-deleted@1'], true);
    await register(input('acme', 'pw-deleted@1', hex(4), true));
    await pool('acme', other, ['pw-other@1']);
    await register(input('acme', 'pw-other@1', hex(5), true));

    expect(await siteCacheImages(db, s)).toEqual([
      { url: signedA.source, sha256: hex(1), format: 'raw' },
      { url: shared.source, sha256: hex(3), format: 'raw' },
    ]);
    expect(await siteCacheImages(db, other)).toEqual([{ url: 'https://images.example.com/acme/pw-other@1.raw.zst', sha256: hex(5), format: 'raw' }]);
    expect(await prewarmDigests(db, s)).toEqual(new Set([hex(1), hex(3)]));
  });

  it('drops an image that no longer verifies (tampered row, revoked signer)', async () => {
    const s = await site();
    const image = await register(input('acme', 'pw-tamper@1', hex(11), true));
    const kept = await register(input('acme', 'pw-kept@1', hex(12), true));
    await pool('acme', s, ['pw-tamper@1', 'pw-kept@1']);
    expect((await siteCacheImages(db, s)).map((c) => c.sha256)).toEqual([hex(11), hex(12)]);
    await db.$executeRaw`UPDATE "Image" SET "format" = 'qcow2' WHERE "id" = ${image.id}`;
    expect((await siteCacheImages(db, s)).map((c) => c.sha256)).toEqual([kept.sha256]);

    const k2 = generateKeyPairSync('ed25519');
    await addImageSigner(db, { tenantId: 'acme', id: 'acme-short-lived', publicKeyPem: k2.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    const base = input('acme', 'pw-revoked@1', hex(13), false);
    await register({ ...base, signerId: 'acme-short-lived', signature: sign(null, imageSigningInput(base), k2.privateKey).toString('base64') });
    const s2 = await site();
    await pool('acme', s2, ['pw-revoked@1']);
    expect(await siteCacheImages(db, s2)).toHaveLength(1);
    await revokeImageSigner(db, { tenantId: 'acme', id: 'acme-short-lived' });
    expect(await siteCacheImages(db, s2)).toEqual([]);
  });

  it('announces the sites whose pools name a ref when it is registered or promoted', async () => {
    const s = await site('acme');
    const elsewhere = await site('acme');
    await pool('acme', s, ['pw-announce@1']);
    await pool('acme', elsewhere, ['something-else@1']);
    const image = await register(input('acme', 'pw-announce@1', hex(21), true));
    await promoteImage(db, 'acme', image.id);
    const events = await db.event.findMany({ where: { tenantId: 'acme', type: 'site.spec.changed' } });
    expect(events.map((e) => e.subjectId)).toEqual([s, s]);
    expect(events[0]?.data).toMatchObject({ field: 'cacheImages', ref: 'pw-announce@1', imageId: image.id });
  });
});

describe('image locations', () => {
  it('derives per-site state from the live agents of the site, and forgets what nobody reports', async () => {
    const s = await site();
    const [a1, a2, gone] = [await agent(s), await agent(s), await agent(s, true)];
    const foreign = await agent(await site());
    const x = await register(input('acme', 'loc-x@1', hex(31), true));
    const xTwin = await register(input('globex', 'loc-x@1', hex(31), false)); // same bytes, another tenant
    const y = await register(input('acme', 'loc-y@1', hex(32), true));
    const z = await register(input('acme', 'loc-z@1', hex(33), true));
    const w = await register(input('acme', 'loc-w@1', hex(34), true));
    const report = (nodeId: string, sha256: string, state: string) => db.nodeImageCache.create({ data: { nodeId, sha256, state, sizeBytes: 1000n } });
    await report(a1, hex(31), 'ready');
    await report(a2, hex(31), 'pulling');
    await report(a2, hex(32), 'pulling');
    await report(a1, hex(33), 'failed');
    await report(gone, hex(34), 'ready');
    await report(foreign, hex(34), 'ready');
    await report(a1, hex(99), 'ready'); // not in the catalog

    expect(await syncSiteImageLocations(db, s)).toMatchObject({ upserted: 4, removed: 0 });
    const rows = await db.imageLocation.findMany({ where: { siteId: s } });
    const stateOf = (id: string) => rows.find((r) => r.imageId === id)?.state;
    expect(stateOf(x.id)).toBe('ready');
    expect(stateOf(xTwin.id)).toBe('ready');
    expect(stateOf(y.id)).toBe('pulling');
    expect(stateOf(z.id)).toBe('failed');
    expect(stateOf(w.id)).toBeUndefined();
    expect((await imagesCachedAt(db, s)).map((c) => c.imageId).sort()).toEqual([x.id, xTwin.id].sort());

    // y finished pulling; z was evicted by the agent, but a deploy pinned it before.
    await db.nodeImageCache.update({ where: { nodeId_sha256: { nodeId: a2, sha256: hex(32) } }, data: { state: 'ready' } });
    await db.nodeImageCache.delete({ where: { nodeId_sha256: { nodeId: a1, sha256: hex(33) } } });
    await db.nodeImageCache.delete({ where: { nodeId_sha256: { nodeId: a2, sha256: hex(31) } } });
    expect(await touchImageLocation(db, { imageId: z.id, siteId: s })).toBe(true);
    expect(await syncSiteImageLocations(db, s)).toMatchObject({ upserted: 3, removed: 0 });
    expect((await db.imageLocation.findUnique({ where: { imageId_siteId: { imageId: y.id, siteId: s } } }))?.state).toBe('ready');
    expect(await db.imageLocation.findUnique({ where: { imageId_siteId: { imageId: z.id, siteId: s } } })).not.toBeNull();
    await touchImageLocation(db, { imageId: z.id, siteId: s, pinForMs: 0 });
    expect(await syncSiteImageLocations(db, s)).toMatchObject({ removed: 1 });
    expect(await touchImageLocation(db, { imageId: w.id, siteId: s })).toBe(false);
  });

  it('picks eviction candidates least recently used first, never pinned or in use, until enough bytes', async () => {
    const s = await site();
    const a = await agent(s);
    const images = [];
    for (let i = 0; i < 4; i++) {
      const image = await register(input('acme', `ev-${i}@1`, hex(40 + i), true));
      await db.nodeImageCache.create({ data: { nodeId: a, sha256: image.sha256, state: 'ready', sizeBytes: 1000n } });
      images.push(image);
    }
    await syncSiteImageLocations(db, s);
    const [i0, i1, i2, i3] = images as [(typeof images)[0], (typeof images)[0], (typeof images)[0], (typeof images)[0]];
    const t0 = Date.now();
    // Used in the order 2, 0, 3, 1 (oldest first); 0 is pinned by a streaming deploy.
    await touchImageLocation(db, { imageId: i2.id, siteId: s, pinForMs: 0 }, new Date(t0 - 4000));
    await touchImageLocation(db, { imageId: i0.id, siteId: s }, new Date(t0 - 3000));
    await touchImageLocation(db, { imageId: i3.id, siteId: s, pinForMs: 0 }, new Date(t0 - 2000));
    await touchImageLocation(db, { imageId: i1.id, siteId: s, pinForMs: 0 }, new Date(t0 - 1000));

    const one = await evictionCandidates(db, s, 1000, []);
    expect(one.map((c) => c.sha256)).toEqual([i2.sha256]);
    const all = await evictionCandidates(db, s, 10_000, []);
    expect(all.map((c) => c.sha256)).toEqual([i2.sha256, i3.sha256, i1.sha256]); // i0 pinned
    const protectedByUse = await evictionCandidates(db, s, 2000, [i2.sha256]);
    expect(protectedByUse.map((c) => c.sha256)).toEqual([i3.sha256, i1.sha256]);
    expect(protectedByUse[0]).toMatchObject({ imageIds: [i3.id], sizeBytes: 1000 });
  });
});
