// A throwaway CA and a server certificate for 127.0.0.1 made with openssl: real X.509 for
// local servers (the demo's image server; tests' BMCs), whose CA the client is handed.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TestCertificates {
  caPem: string;
  caFile: string;
  certFile: string;
  /** The server certificate then the CA: what a server sends so a client holding only the CA's pin finds it. */
  chainFile: string;
  keyFile: string;
}

/** `extraIps`: addresses beside 127.0.0.1 the certificate names (a namespace bridge address machines dial). */
export function makeServerCertificate(dir: string, commonName = 'bmc.test', extraIps: string[] = []): TestCertificates {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
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
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
    '-subj',
    `/CN=${commonName}`,
  );
  const altNames = ['IP:127.0.0.1', ...extraIps.map((ip) => `IP:${ip}`), 'DNS:localhost'].join(',');
  writeFileSync(
    file('server.ext'),
    `subjectAltName=${altNames}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('server.pem'),
    '-days',
    '2',
    '-extfile',
    file('server.ext'),
  );
  const caPem = readFileSync(file('ca.pem'), 'utf8');
  writeFileSync(file('chain.pem'), readFileSync(file('server.pem'), 'utf8') + caPem);
  return { caPem, caFile: file('ca.pem'), certFile: file('server.pem'), chainFile: file('chain.pem'), keyFile: file('server.key') };
}
