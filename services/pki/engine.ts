// pkijs runs over the platform's WebCrypto; registered once, explicitly, so it never
// guesses an engine.
import { webcrypto } from 'node:crypto';
import * as pkijs from 'pkijs';

type EngineCrypto = ConstructorParameters<typeof pkijs.CryptoEngine>[0]['crypto'];
let registered = false;

export function pki(): typeof pkijs {
  if (!registered) {
    pkijs.setEngine('node-webcrypto', new pkijs.CryptoEngine({ name: 'node-webcrypto', crypto: webcrypto as unknown as EngineCrypto }));
    registered = true;
  }
  return pkijs;
}
