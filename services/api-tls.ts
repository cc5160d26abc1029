// The API's HTTPS material (api.tls / IRONFLOW_API_TLS_CERT, IRONFLOW_API_TLS_KEY), read and
// checked when the control plane starts: a missing or unreadable file, or a key that is not
// the certificate's, is INVALID_CONFIG naming the file and the fix, never a TLS error later.
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { IronflowConfig } from './config';
import { IronflowError } from '../core/errors';

export interface ApiTlsMaterial {
  /** The server's certificate, then its chain (agents given only a pin find their CA in it). */
  cert: string;
  key: string;
}

function readPem(file: string, what: string, variable: string, marker: RegExp): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new IronflowError(
      'INVALID_CONFIG',
      `the API's TLS ${what} ${file} cannot be read (${code}): fix api.tls in temporal-dev.yaml or ${variable}, or make the file readable by the control plane`,
      { path: `api.tls.${what === 'certificate' ? 'certFile' : 'keyFile'}`, file },
    );
  }
  if (!marker.test(text)) {
    throw new IronflowError('INVALID_CONFIG', `the API's TLS ${what} ${file} holds no PEM ${what}: fix api.tls in temporal-dev.yaml or ${variable}`, {
      path: `api.tls.${what === 'certificate' ? 'certFile' : 'keyFile'}`,
      file,
    });
  }
  return text;
}

/** The files' contents, or undefined when the API serves plain http (no api.tls). */
export function apiTlsMaterial(config: IronflowConfig): ApiTlsMaterial | undefined {
  const tls = config.api.tls;
  if (!tls) return undefined;
  const cert = readPem(tls.certFile, 'certificate', 'IRONFLOW_API_TLS_CERT', /-----BEGIN CERTIFICATE-----/);
  const key = readPem(tls.keyFile, 'key', 'IRONFLOW_API_TLS_KEY', /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    // OpenSSL's reason (e.g. "key values mismatch"); never the key itself.
    throw new IronflowError(
      'INVALID_CONFIG',
      `the API's TLS key ${tls.keyFile} does not go with the certificate ${tls.certFile} (${(error as Error).message}): give the key the certificate was issued for`,
      { path: 'api.tls' },
    );
  }
  return { cert, key };
}
