// The history codec: a Temporal PayloadCodec that seals each payload whole with AES-256-GCM.
// A sealed payload's data is nonce || ciphertext || tag of the original Payload serialized as
// protobuf (temporal.api.common.v1.Payload), so the original's metadata (its encoding, a
// message type) is sealed too; only `encoding: binary/encrypted` and the key id stay readable.
// Decoding passes every other payload through unchanged, so histories written before sealing
// was turned on still read.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '../temporal-proto';
import { IronflowError } from '../../core/errors';
import type { HistoryKeyRing } from './key-ring';

export const SEALED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const utf8 = new TextEncoder();
const text = (bytes: Uint8Array | null | undefined): string | undefined => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);
/** Binds a ciphertext to its key id (and this scheme): a payload relabelled to another key does not open. */
const associatedData = (keyId: string): Buffer => Buffer.from(`ironflow-history-v1:${keyId}`);

export const isSealed = (payload: Payload): boolean => text(payload.metadata?.[METADATA_ENCODING_KEY]) === SEALED_ENCODING;

/** The payload at `index` of a decode call does not open; `reason` says why, for the caller to map. */
export class UnsealError extends IronflowError {
  constructor(
    readonly index: number,
    readonly reason: 'unknown-key' | 'no-key-id' | 'tampered',
    message: string,
    keyId?: string,
  ) {
    super(reason === 'unknown-key' ? 'INVALID_CONFIG' : 'INVALID_INPUT', message, { path: `payloads[${index}]`, reason, ...(keyId ? { keyId } : {}) });
  }
}

export interface SealingCodecOptions {
  /** false: encode leaves payloads as they are (sealing is off), decode still unseals. */
  seal: boolean;
}

export class SealingCodec implements PayloadCodec {
  constructor(
    private readonly ring: HistoryKeyRing,
    private readonly options: SealingCodecOptions = { seal: true },
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return this.options.seal ? payloads.map((payload) => this.sealOne(payload)) : payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload, index) => (isSealed(payload) ? this.unsealOne(payload, index) : payload));
  }

  private sealOne(payload: Payload): Payload {
    const { id, key } = this.ring.current;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(associatedData(id));
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    return {
      metadata: { [METADATA_ENCODING_KEY]: utf8.encode(SEALED_ENCODING), [KEY_ID_METADATA]: utf8.encode(id) },
      data: Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]),
    };
  }

  private unsealOne(payload: Payload, index: number): Payload {
    const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
    if (!keyId) throw new UnsealError(index, 'no-key-id', `sealed payload ${index} names no ${KEY_ID_METADATA}: it was altered`);
    const key = this.ring.byId.get(keyId);
    if (!key) {
      throw new UnsealError(
        index,
        'unknown-key',
        `payload ${index} is sealed with history key ${JSON.stringify(keyId.slice(0, 64))}, which ${this.ring.file} does not hold: every control-plane process needs the same key ring (copy the file from the one that sealed it), and a key stays in it while any history sealed with it is kept (restore it from a backup)`,
        keyId.slice(0, 64),
      );
    }
    const sealed = Buffer.from(payload.data ?? new Uint8Array());
    if (sealed.length < NONCE_BYTES + TAG_BYTES)
      throw new UnsealError(index, 'tampered', `sealed payload ${index} is too short to be one: it was altered`, keyId);
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, NONCE_BYTES));
    decipher.setAAD(associatedData(keyId));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new UnsealError(
        index,
        'tampered',
        `sealed payload ${index} does not open with history key ${JSON.stringify(keyId.slice(0, 64))}: it was altered, or the key's bytes in ${this.ring.file} changed`,
        keyId,
      );
    }
    return temporal.api.common.v1.Payload.decode(plain);
  }
}
