// ECDSA signatures from the pkijs engine (services/pki/engine.ts) are canonical DER whatever
// WebCrypto draws. pkijs's own conversion of a raw r||s whose r starts with two zero bytes
// (about one signature in 30,000) keeps a zero byte too many, and OpenSSL refuses it: a CSR
// or certificate signed then would fail to verify, once in a long while (seen in CI).
import { KeyObject, verify, webcrypto } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { describe, expect, it } from 'vitest';
import { CanonicalEcdsaEngine } from '../../services/pki/engine';

type EngineCrypto = ConstructorParameters<typeof pkijs.CryptoEngine>[0]['crypto'];
type EngineKey = Parameters<pkijs.CryptoEngine['signWithPrivateKey']>[1];

/** The raw r||s WebCrypto could return: r = 00 00 12 …, s = 05 …. */
function unluckyDraw(): ArrayBuffer {
  const raw = new Uint8Array(64).map((_, i) => i);
  raw[0] = 0x00;
  raw[1] = 0x00;
  raw[2] = 0x12;
  raw[32] = 0x05;
  return raw.buffer;
}

/** WebCrypto whose ECDSA draw is always the unlucky one. */
const drawingCrypto = { subtle: { sign: async () => unluckyDraw() } } as unknown as EngineCrypto;

describe('ECDSA signatures from the pkijs engine', () => {
  it('pkijs alone encodes the unlucky draw with a leading zero byte DER forbids', () => {
    const der = new Uint8Array(pkijs.createCMSECDSASignature(unluckyDraw()));
    const sequence = asn1js.fromBER(der).result as asn1js.Sequence;
    const r = sequence.valueBlock.value[0] as asn1js.Integer;
    const bytes = r.valueBlock.valueHexView;
    expect(bytes[0] === 0x00 && ((bytes[1] as number) & 0x80) === 0).toBe(true);
  });

  it('verifies with the public key, however WebCrypto would have drawn', async () => {
    const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const engine = new CanonicalEcdsaEngine({ name: 'unlucky', crypto: drawingCrypto });
    const data = new TextEncoder().encode('a certificate request');
    const signature = await engine.signWithPrivateKey(data, keys.privateKey as unknown as EngineKey, {
      algorithm: { name: 'ECDSA', hash: { name: 'SHA-256' } } as never,
    });
    const publicKey = KeyObject.from(keys.publicKey);
    expect(verify('sha256', data, publicKey, new Uint8Array(signature))).toBe(true);
  });
});
