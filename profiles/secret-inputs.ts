// Histories hold references only: a step input that carries a secret (a field named like
// one, a bearer, a private key) is refused, with its path. Pass a `…Ref` to the secret
// store instead.
import type { Problem } from '../core/schemas/profiles';

const secretKeyName = /(password|passwd|passphrase|secret|token|credential|bearer|private_?key|api_?key|ssh_?key)|^key$/i;
const referenceKeyName = /(Ref|Refs|Id|Ids|_ref|_id)$/;
/** Our bearer schemes (`ifk_…`, `ifjt_…`), PEM private keys, and `Bearer …` headers. */
const secretValue = /(\bif[a-z]{1,3}_[A-Za-z0-9_]+\.[A-Za-z0-9_-]{16,})|(^|\s)if(k|jt)_\S+|-----BEGIN [A-Z ]*PRIVATE KEY-----|^Bearer\s+\S{16,}/;

export function secretInputProblems(value: unknown, path: string): Problem[] {
  const problems: Problem[] = [];
  const walk = (v: unknown, at: string): void => {
    if (typeof v === 'string') {
      if (secretValue.test(v))
        problems.push({
          path: at,
          message: 'looks like a secret (a bearer or a private key); workflow histories hold references only: store it and pass its sec_… reference',
        });
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${at}[${i}]`));
      return;
    }
    if (v && typeof v === 'object') {
      for (const [key, inner] of Object.entries(v)) {
        const keyPath = `${at}.${key}`;
        if (secretKeyName.test(key) && !referenceKeyName.test(key)) {
          problems.push({
            path: keyPath,
            message: `"${key}" names a secret; workflow histories hold references only: pass ${key}Ref (a sec_… reference from the secret store) instead`,
          });
          continue;
        }
        walk(inner, keyPath);
      }
    }
  };
  walk(value, path);
  return problems;
}
