// The one place the control plane's connection to the Temporal frontend is described: its
// address and, with temporal.tls, the CA, client certificate and server name, read and
// checked here. Every connection the control plane makes takes these options: the client
// (Connection), the worker (NativeConnection), the cluster's readiness probe and the agent
// gateway's upstream. A missing or unreadable file, or one that is not PEM, is INVALID_CONFIG
// naming the setting and the fix; no message quotes a file's contents (the key is a secret).
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { IronflowError } from '../../core/errors';
import type { IronflowConfig, TemporalTlsSettings } from '../config';

/** The shape `@temporalio/client` Connection and `@temporalio/worker` NativeConnection take as `tls`. */
export interface TemporalTls {
  /** The frontend's CA; omitted, the system's roots verify it. */
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
  /** The name the frontend's certificate is verified against (and sent as SNI) instead of the address's host. */
  serverNameOverride?: string;
}

export interface TemporalConnectionOptions {
  address: string;
  /** Unset: plain gRPC (the dev server on loopback). */
  tls?: TemporalTls;
}

const SETTINGS = {
  caFile: { variable: 'IRONFLOW_TEMPORAL_TLS_CA', what: "the frontend's CA certificate", pem: 'certificate', marker: /-----BEGIN CERTIFICATE-----/ },
  certFile: { variable: 'IRONFLOW_TEMPORAL_TLS_CERT', what: 'the client certificate', pem: 'certificate', marker: /-----BEGIN CERTIFICATE-----/ },
  keyFile: {
    variable: 'IRONFLOW_TEMPORAL_TLS_KEY',
    what: "the client certificate's key",
    pem: 'private key',
    marker: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/,
  },
} as const;

function readPem(file: string, setting: keyof typeof SETTINGS): Buffer {
  const { variable, what, pem, marker } = SETTINGS[setting];
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new IronflowError(
      'INVALID_CONFIG',
      `temporal.tls.${setting} (${variable}): ${what} ${file} cannot be read (${code}): give the path of a readable file, or make it readable by the control plane`,
      { path: `temporal.tls.${setting}`, file },
    );
  }
  if (!marker.test(bytes.toString('latin1')))
    throw new IronflowError('INVALID_CONFIG', `temporal.tls.${setting} (${variable}): ${file} holds no PEM ${pem}: give ${what} as a PEM file`, {
      path: `temporal.tls.${setting}`,
      file,
    });
  return bytes;
}

/** The files' contents as the SDK and grpc-js take them; throws INVALID_CONFIG on a bad file. */
export function temporalTlsMaterial(settings: TemporalTlsSettings): TemporalTls {
  const tls: TemporalTls = {};
  if (settings.caFile) tls.serverRootCACertificate = readPem(settings.caFile, 'caFile');
  if (settings.clientCertificate) {
    const { certFile, keyFile } = settings.clientCertificate;
    const crt = readPem(certFile, 'certFile');
    const key = readPem(keyFile, 'keyFile');
    try {
      createSecureContext({ cert: crt, key });
    } catch (error) {
      // OpenSSL's reason (e.g. "key values mismatch"); never the key itself.
      throw new IronflowError(
        'INVALID_CONFIG',
        `temporal.tls.keyFile (IRONFLOW_TEMPORAL_TLS_KEY) ${keyFile} does not go with the client certificate ${certFile} (${(error as Error).message}): give the key the certificate was issued for`,
        { path: 'temporal.tls' },
      );
    }
    tls.clientCertPair = { crt, key };
  }
  if (settings.serverName) tls.serverNameOverride = settings.serverName;
  return tls;
}

/** How to reach the frontend: `{ address }`, plus `tls` when temporal.tls is set. */
export function temporalConnectionOptions(temporal: Pick<IronflowConfig['temporal'], 'address' | 'tls'>): TemporalConnectionOptions {
  return { address: temporal.address, ...(temporal.tls ? { tls: temporalTlsMaterial(temporal.tls) } : {}) };
}
