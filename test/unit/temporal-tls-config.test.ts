// temporal.tls (IRONFLOW_TEMPORAL_TLS_*): how the settings are read, and what is refused at
// start (services/config.ts, services/temporal/connection-options.ts), with real PEM files
// from a throwaway CA.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, inject } from 'vitest';
import { IronflowError } from '../../core/errors';
import { loadConfig, repoRoot, temporalTlsEnv } from '../../services/config';
import { temporalConnectionOptions } from '../../services/temporal/connection-options';
import { makeClientCertificate, makeServerCertificate, type TestCertificates } from '../../stack/throwaway-tls';

let dir: string;
let ca: TestCertificates;
let client: { certFile: string; keyFile: string };

beforeAll(() => {
  dir = mkdtempSync(path.join(inject('runDir'), 'ironflow-temporal-tls-'));
  ca = makeServerCertificate(dir, 'temporal.test');
  client = makeClientCertificate(dir, 'ironflow.test');
});

const mtlsEnv = () => ({ IRONFLOW_TEMPORAL_TLS_CA: ca.caFile, IRONFLOW_TEMPORAL_TLS_CERT: client.certFile, IRONFLOW_TEMPORAL_TLS_KEY: client.keyFile });

/** The INVALID_CONFIG thrown by `act`, or a failure when it throws nothing or something else. */
function configError(act: () => unknown): IronflowError {
  try {
    act();
  } catch (error) {
    expect(error).toBeInstanceOf(IronflowError);
    expect((error as IronflowError).code).toBe('INVALID_CONFIG');
    return error as IronflowError;
  }
  throw new Error('expected INVALID_CONFIG, nothing was thrown');
}

describe('temporal.tls', () => {
  it('is off by default: plain gRPC to the dev server', () => {
    const config = loadConfig({});
    expect(config.temporal.tls).toBeUndefined();
    expect(temporalConnectionOptions(config.temporal)).toEqual({ address: '127.0.0.1:7233' });
  });

  it('reads the CA, the client certificate and its key, and the server name from the environment', () => {
    const config = loadConfig({ ...mtlsEnv(), IRONFLOW_TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', IRONFLOW_TEMPORAL_TLS_SERVER_NAME: 'frontend.test' });
    expect(config.temporal.tls).toEqual({
      caFile: ca.caFile,
      clientCertificate: { certFile: client.certFile, keyFile: client.keyFile },
      serverName: 'frontend.test',
    });
    const options = temporalConnectionOptions(config.temporal);
    expect(options.address).toBe('ns.acct.tmprl.cloud:7233');
    expect(options.tls?.serverRootCACertificate).toEqual(readFileSync(ca.caFile));
    expect(options.tls?.clientCertPair).toEqual({ crt: readFileSync(client.certFile), key: readFileSync(client.keyFile) });
    expect(options.tls?.serverNameOverride).toBe('frontend.test');
    // What a parent process hands a child (the cluster profile's workers) reads back the same.
    expect(loadConfig(temporalTlsEnv(config.temporal.tls ?? {})).temporal.tls).toEqual(config.temporal.tls);
  });

  it('takes a client certificate without a CA (the system roots verify the frontend, as for Temporal Cloud)', () => {
    const options = temporalConnectionOptions(loadConfig({ IRONFLOW_TEMPORAL_TLS_CERT: client.certFile, IRONFLOW_TEMPORAL_TLS_KEY: client.keyFile }).temporal);
    expect(options.tls?.serverRootCACertificate).toBeUndefined();
    expect(options.tls?.clientCertPair?.crt).toEqual(readFileSync(client.certFile));
  });

  it('resolves relative paths against the repository root, like the config’s other files', () => {
    const relative = path.relative(repoRoot, ca.caFile);
    expect(loadConfig({ IRONFLOW_TEMPORAL_TLS_CA: relative }).temporal.tls?.caFile).toBe(ca.caFile);
  });

  it('refuses a certificate without its key, or a key without its certificate, naming the missing variable', () => {
    expect(configError(() => loadConfig({ IRONFLOW_TEMPORAL_TLS_CERT: client.certFile })).message).toMatch(
      /set IRONFLOW_TEMPORAL_TLS_KEY \(temporal\.tls\.keyFile\) too, or neither/,
    );
    expect(configError(() => loadConfig({ IRONFLOW_TEMPORAL_TLS_KEY: client.keyFile })).message).toMatch(
      /set IRONFLOW_TEMPORAL_TLS_CERT \(temporal\.tls\.certFile\) too, or neither/,
    );
  });

  it('refuses an unreadable file at start, naming the setting and the file', () => {
    const missing = path.join(dir, 'no-such-ca.pem');
    const error = configError(() => temporalConnectionOptions(loadConfig({ ...mtlsEnv(), IRONFLOW_TEMPORAL_TLS_CA: missing }).temporal));
    expect(error.message).toContain('temporal.tls.caFile (IRONFLOW_TEMPORAL_TLS_CA)');
    expect(error.message).toContain(`${missing} cannot be read (ENOENT)`);
  });

  it('refuses a file that is not PEM without quoting it (a key given as the certificate stays secret)', () => {
    const key = readFileSync(client.keyFile, 'utf8');
    const error = configError(() => temporalConnectionOptions(loadConfig({ ...mtlsEnv(), IRONFLOW_TEMPORAL_TLS_CERT: client.keyFile }).temporal));
    expect(error.message).toContain('temporal.tls.certFile (IRONFLOW_TEMPORAL_TLS_CERT)');
    expect(error.message).toContain(`${client.keyFile} holds no PEM certificate: give the client certificate as a PEM file`);
    expect(error.message).not.toContain(key.split('\n')[1]);

    const garbage = path.join(dir, 'garbage.pem');
    writeFileSync(garbage, 'opaque-contents-4711');
    expect(configError(() => temporalConnectionOptions(loadConfig({ IRONFLOW_TEMPORAL_TLS_CA: garbage }).temporal)).message).not.toContain(
      'opaque-contents-4711',
    );
  });

  it('refuses a key that does not go with the client certificate, without quoting either', () => {
    const otherDir = mkdtempSync(path.join(dir, 'other-'));
    makeServerCertificate(otherDir, 'other-ca.test');
    const other = makeClientCertificate(otherDir, 'other.test');
    const error = configError(() => temporalConnectionOptions(loadConfig({ ...mtlsEnv(), IRONFLOW_TEMPORAL_TLS_KEY: other.keyFile }).temporal));
    expect(error.message).toMatch(/does not go with the client certificate .*: give the key the certificate was issued for/);
    expect(error.message).not.toContain(readFileSync(other.keyFile, 'utf8').split('\n')[1]);
  });
});
