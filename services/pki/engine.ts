// pkijs runs over the platform's WebCrypto; registered once, explicitly, so it never
// guesses an engine.
import { KeyObject, sign, webcrypto } from 'node:crypto';
import * as pkijs from 'pkijs';

type EngineCrypto = ConstructorParameters<typeof pkijs.CryptoEngine>[0]['crypto'];
type SignArguments = Parameters<pkijs.CryptoEngine['signWithPrivateKey']>;

/**
 * pkijs turns WebCrypto's raw ECDSA signature (r||s) into DER itself, and drops only one
 * leading zero byte of each integer: about one signature in 30,000 comes out non-minimal,
 * which OpenSSL (so node:crypto's verify and TLS) refuses. ECDSA is signed here by
 * node:crypto, whose DER is canonical; every other algorithm is pkijs's own.
 */
export class CanonicalEcdsaEngine extends pkijs.CryptoEngine {
  override async signWithPrivateKey(data: SignArguments[0], privateKey: SignArguments[1], parameters: SignArguments[2]): Promise<ArrayBuffer> {
    const algorithm = parameters.algorithm as { name: string; hash?: { name: string } | string };
    if (algorithm.name !== 'ECDSA') return super.signWithPrivateKey(data, privateKey, parameters);
    const hash = typeof algorithm.hash === 'string' ? algorithm.hash : algorithm.hash?.name;
    if (!hash) throw new Error('ECDSA signing needs a hash algorithm');
    const key = KeyObject.from(privateKey as unknown as webcrypto.CryptoKey);
    const bytes = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
    const der = sign(hash.replace('-', '').toLowerCase(), bytes, { key, dsaEncoding: 'der' });
    return der.buffer.slice(der.byteOffset, der.byteOffset + der.byteLength) as ArrayBuffer;
  }
}

let registered = false;

export function pki(): typeof pkijs {
  if (!registered) {
    pkijs.setEngine('node-webcrypto', new CanonicalEcdsaEngine({ name: 'node-webcrypto', crypto: webcrypto as unknown as EngineCrypto }));
    registered = true;
  }
  return pkijs;
}
