// A throwaway CA and a server certificate for 127.0.0.1 made with openssl: real X.509 for
// local servers (the demo's image server; tests' BMCs; the cluster profile's Temporal
// frontend, with a client certificate from the same CA), whose CA the client is handed.
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TestCertificates {
  caPem: string;
  caFile: string;
  certFile: string;
  /** The server certificate then the CA: what a server sends so a client holding only the CA's pin finds it. */
  chainFile: string;
  keyFile: string;
}

const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });

/** `<name>.pem` and `<name>.key` (0600), signed by the CA in `dir` (ca.pem, ca.key). */
function issueCertificate(dir: string, name: string, commonName: string, extensions: { subjectAltName?: string; extendedKeyUsage: string }): void {
  const file = (suffix: string) => path.join(dir, `${name}${suffix}`);
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', file('.key'), '-out', file('.csr'), '-subj', `/CN=${commonName}`);
  chmodSync(file('.key'), 0o600);
  writeFileSync(
    file('.ext'),
    `${extensions.subjectAltName ? `subjectAltName=${extensions.subjectAltName}\n` : ''}basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=${extensions.extendedKeyUsage}\n`,
  );
  const ca = (suffix: string) => path.join(dir, `ca${suffix}`);
  openssl(
    'x509',
    '-req',
    '-in',
    file('.csr'),
    '-CA',
    ca('.pem'),
    '-CAkey',
    ca('.key'),
    '-CAcreateserial',
    '-out',
    file('.pem'),
    '-days',
    '2',
    '-extfile',
    file('.ext'),
  );
}

/** A client certificate (client.pem, client.key) from the CA makeServerCertificate made in `dir`: for a server that requires one (mTLS). */
export function makeClientCertificate(dir: string, commonName: string): { certFile: string; keyFile: string } {
  issueCertificate(dir, 'client', commonName, { extendedKeyUsage: 'clientAuth' });
  return { certFile: path.join(dir, 'client.pem'), keyFile: path.join(dir, 'client.key') };
}

/** `extraIps`: addresses beside 127.0.0.1 the certificate names (a namespace bridge address machines dial). */
export function makeServerCertificate(dir: string, commonName = 'bmc.test', extraIps: string[] = []): TestCertificates {
  const file = (name: string) => path.join(dir, name);
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Ironflow throwaway CA',
  );
  chmodSync(file('ca.key'), 0o600);
  issueCertificate(dir, 'server', commonName, {
    subjectAltName: ['IP:127.0.0.1', ...extraIps.map((ip) => `IP:${ip}`), 'DNS:localhost'].join(','),
    extendedKeyUsage: 'serverAuth',
  });
  const caPem = readFileSync(file('ca.pem'), 'utf8');
  writeFileSync(file('chain.pem'), readFileSync(file('server.pem'), 'utf8') + caPem);
  return { caPem, caFile: file('ca.pem'), certFile: file('server.pem'), chainFile: file('chain.pem'), keyFile: file('server.key') };
}
