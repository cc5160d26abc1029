// The history codec and its key ring: a round trip through Temporal's own payload converter,
// a tampered payload refused, rotation (new payloads sealed with the newest key, old ones
// still open), an unknown key id named with the fix, unsealed payloads passed through, and
// the key ring file created once, 0600, and checked.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../services/config';
import { IronflowError } from '../../core/errors';
import { historyKeysFile, KEY_ID_METADATA, loadHistoryKeyRing, SEALED_ENCODING, sealingCodecFor, SealingCodec } from '../../services/sealing';
import { newHistoryKeyEntry, type HistoryKeyRingFile } from '../../services/sealing/key-ring';

const dataDir = () => mkdtempSync(path.join(inject('runDir'), 'ironflow-sealing-'));
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const fromPayload = (payload: Payload): unknown => defaultPayloadConverter.fromPayload(payload);

function writeRing(dir: string, document: HistoryKeyRingFile): void {
  writeFileSync(historyKeysFile(dir), JSON.stringify(document), { mode: 0o600 });
}

async function refusal(promise: Promise<unknown>): Promise<IronflowError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof IronflowError)) throw new Error(`expected an IronflowError, got ${String(error)}`);
  return error;
}

describe('the history codec', () => {
  it('seals every payload whole (its metadata too) and opens it again', async () => {
    const codec = new SealingCodec(loadHistoryKeyRing(dataDir()));
    const values = [{ nodeId: 'node_sealed_1', labels: { rack: 'r-secret-42' } }, 'plain string', undefined, new Uint8Array([1, 2, 3])];
    const sealed = await codec.encode(values.map(toPayload));
    for (const payload of sealed) {
      expect(Object.keys(payload.metadata ?? {}).sort()).toEqual(['encoding', KEY_ID_METADATA]);
      expect(text(payload.metadata?.encoding)).toBe(SEALED_ENCODING);
      // Neither the value nor the original encoding (json/plain) is readable.
      expect(Buffer.from(payload.data ?? []).includes('r-secret-42')).toBe(false);
      expect(Buffer.from(payload.data ?? []).includes('json/plain')).toBe(false);
    }
    // Two seals of one value differ (a fresh nonce each).
    expect(Buffer.from(sealed[0]?.data ?? []).equals(Buffer.from((await codec.encode([toPayload(values[0])]))[0]?.data ?? []))).toBe(false);
    const opened = await codec.decode(sealed);
    expect(opened.map((p) => text(p.metadata?.encoding))).toEqual(['json/plain', 'json/plain', 'binary/null', 'binary/plain']);
    expect(opened.map(fromPayload)).toEqual(values);
  });

  it('passes payloads that are not sealed through unchanged (histories from before sealing)', async () => {
    const codec = new SealingCodec(loadHistoryKeyRing(dataDir()));
    const plain = toPayload({ written: 'before sealing' });
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  it('refuses a tampered payload, a payload relabelled to another key and one without a key id', async () => {
    const dir = dataDir();
    writeRing(dir, { keys: [newHistoryKeyEntry(), newHistoryKeyEntry()] });
    const ring = loadHistoryKeyRing(dir);
    const codec = new SealingCodec(ring);
    const [sealed] = await codec.encode([toPayload({ secret: 'x' })]);
    if (!sealed?.data) throw new Error('nothing sealed');

    const flipped = Buffer.from(sealed.data);
    flipped[20] = (flipped[20] ?? 0) ^ 1;
    const tampered = await refusal(codec.decode([toPayload('fine'), { ...sealed, data: flipped }]));
    expect(tampered.code).toBe('INVALID_INPUT');
    expect(tampered.details).toMatchObject({ path: 'payloads[1]', reason: 'tampered', keyId: ring.current.id });
    expect(tampered.message).toContain('was altered');

    const [firstId] = [...ring.byId.keys()];
    const relabelled = await refusal(codec.decode([{ ...sealed, metadata: { ...sealed.metadata, [KEY_ID_METADATA]: Buffer.from(firstId ?? '') } }]));
    expect(relabelled.details.reason).toBe('tampered');

    const truncated = await refusal(codec.decode([{ ...sealed, data: sealed.data.subarray(0, 10) }]));
    expect(truncated.details.reason).toBe('tampered');

    const noKeyId = await refusal(codec.decode([{ ...sealed, metadata: { encoding: sealed.metadata?.encoding ?? new Uint8Array() } }]));
    expect(noKeyId.details.reason).toBe('no-key-id');
  });

  it('rotation: a key added last seals from then on, and payloads sealed with the older key still open', async () => {
    const dir = dataDir();
    const first = loadHistoryKeyRing(dir);
    const old = await new SealingCodec(first).encode([toPayload({ sealed: 'before rotation' })]);

    const document = JSON.parse(readFileSync(historyKeysFile(dir), 'utf8')) as HistoryKeyRingFile;
    const added = newHistoryKeyEntry();
    writeRing(dir, { keys: [...document.keys, added] });
    const rotated = new SealingCodec(loadHistoryKeyRing(dir));
    const fresh = await rotated.encode([toPayload({ sealed: 'after rotation' })]);

    expect(text(old[0]?.metadata?.[KEY_ID_METADATA])).toBe(first.current.id);
    expect(text(fresh[0]?.metadata?.[KEY_ID_METADATA])).toBe(added.id);
    expect((await rotated.decode([...old, ...fresh])).map(fromPayload)).toEqual([{ sealed: 'before rotation' }, { sealed: 'after rotation' }]);
  });

  it('an unknown key id is INVALID_CONFIG naming the key, the key ring file and the fix', async () => {
    const sealedElsewhere = await new SealingCodec(loadHistoryKeyRing(dataDir())).encode([toPayload('from another control plane')]);
    const dir = dataDir();
    const here = new SealingCodec(loadHistoryKeyRing(dir));
    const error = await refusal(here.decode(sealedElsewhere));
    const keyId = text(sealedElsewhere[0]?.metadata?.[KEY_ID_METADATA]);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.details).toMatchObject({ reason: 'unknown-key', keyId, path: 'payloads[0]' });
    expect(error.message).toContain(keyId);
    expect(error.message).toContain(historyKeysFile(dir));
    expect(error.message).toContain('copy the file');
  });
});

describe('the history key ring', () => {
  it('is created once, 0600, with one key; a second load reads the same key', () => {
    const dir = dataDir();
    const ring = loadHistoryKeyRing(dir);
    expect(statSync(historyKeysFile(dir)).mode & 0o777).toBe(0o600);
    expect(ring.current.key.length).toBe(32);
    expect(ring.current.id).toMatch(/^hk-\d{8}-[0-9a-f]{8}$/);
    const again = loadHistoryKeyRing(dir);
    expect(again.current.id).toBe(ring.current.id);
    expect(again.current.key.equals(ring.current.key)).toBe(true);
  });

  it('refuses a broken file with INVALID_CONFIG naming the entry and the fix', () => {
    const cases: Array<[string, string]> = [
      ['not json', 'is not JSON'],
      [JSON.stringify({ keys: [] }), 'at least one key'],
      [JSON.stringify({ keys: [{ id: 'k1', key: Buffer.alloc(16).toString('base64') }] }), 'keys.0.key is not 32 bytes'],
      [JSON.stringify({ keys: [{ id: 'k 1', key: Buffer.alloc(32).toString('base64') }] }), 'keys.0.id'],
      [JSON.stringify({ keys: [newHistoryKeyEntry(), { ...newHistoryKeyEntry(), id: 'dup' }, { ...newHistoryKeyEntry(), id: 'dup' }] }), 'dup is listed twice'],
    ];
    for (const [content, message] of cases) {
      const dir = dataDir();
      writeFileSync(historyKeysFile(dir), content);
      expect(() => loadHistoryKeyRing(dir)).toThrow(message);
      try {
        loadHistoryKeyRing(dir);
      } catch (error) {
        expect((error as IronflowError).code).toBe('INVALID_CONFIG');
      }
    }
  });
});

describe('sealingCodecFor', () => {
  const configWith = (dir: string, seal: boolean) => loadConfig({ ...process.env, IRONFLOW_DATA_DIR: dir, IRONFLOW_SEAL_HISTORIES: String(seal) });

  it('off and never on: no codec, no key ring written', () => {
    const dir = dataDir();
    expect(sealingCodecFor(configWith(dir, false))).toBeUndefined();
    expect(() => statSync(historyKeysFile(dir))).toThrow();
  });

  it('on: seals; turned off again: new payloads stay as they are and sealed ones still open', async () => {
    const dir = dataDir();
    const on = sealingCodecFor(configWith(dir, true));
    if (!on) throw new Error('no codec with sealing on');
    const sealed = await on.encode([toPayload({ workflow: 'started while sealing was on' })]);
    expect(text(sealed[0]?.metadata?.encoding)).toBe(SEALED_ENCODING);

    const off = sealingCodecFor(configWith(dir, false));
    if (!off) throw new Error('no codec left to open what was sealed');
    const plain = toPayload({ written: 'after sealing was turned off' });
    expect(await off.encode([plain])).toEqual([plain]);
    expect((await off.decode([...sealed, plain])).map(fromPayload)).toEqual([
      { workflow: 'started while sealing was on' },
      { written: 'after sealing was turned off' },
    ]);
  });

  it('IRONFLOW_SEAL_HISTORIES takes true or false only', () => {
    expect(() => loadConfig({ ...process.env, IRONFLOW_SEAL_HISTORIES: 'yes' })).toThrow('IRONFLOW_SEAL_HISTORIES=yes is not true or false');
  });
});
