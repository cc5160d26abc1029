// The node CA: signs the certificates agents authenticate with. Created on first start
// (ECDSA P-256, 10 years); its private key lives in the secret store, sealed, next to its
// certificate, so every control-plane process on the same database signs with the same CA.
import { createHash, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as asn1js from 'asn1js';
import type * as Pkijs from 'pkijs';
import type { DbOrTx } from '../db';
import { IronflowError } from '../../core/errors';
import { ROOT_TENANT } from '../../core/permissions';
import type { SecretStore } from '../secret-store';
import { caExtensions, keyIdentifier, leafExtensions, OID, randomSerial, distinguishedName, serverExtensions } from './certificate-builder';
import { pki } from './engine';
import { identityUri, parseIdentityUri, type NodeIdentity } from '../../core/pki/identity';
import { publicKeyFromSpki } from './node-key';
import { exactBuffer, fromPem, toPem } from '../../core/pki/pem';
import { RecentCache } from '../../core/recent-cache';

/** WebCrypto's key type as pkijs names it (no DOM lib here). */
type PkiCryptoKey = Parameters<Pkijs.Certificate['sign']>[0];

const CA_SECRET_PURPOSE = 'pki.node-ca';
const CA_VALIDITY_YEARS = 10;
/** Clock skew allowance: certificates start a minute in the past. */
const BACKDATE_MS = 60_000;
const CA_NAME: Array<[string, string]> = [
  [OID.organization, 'Ironflow'],
  [OID.commonName, 'Ironflow node CA'],
];
const ecdsaP256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;

export interface IssuedCertificate {
  pem: string;
  serial: string;
  /** sha256 of the DER, hex. */
  fingerprint: string;
  notBefore: Date;
  notAfter: Date;
}

export interface VerifiedCertificate {
  serial: string;
  fingerprint: string;
  notBefore: Date;
  notAfter: Date;
  identity: NodeIdentity;
  spkiDer: Uint8Array;
  /** The same key, parsed once with the certificate: every signed agent request is checked against it. */
  publicKey: KeyObject;
}

interface StoredCa {
  certificatePem: string;
  privateKeyPkcs8: string;
}

export const fingerprintOf = (der: Uint8Array): string => createHash('sha256').update(der).digest('hex');

/** Certificates verified, one per live agent: a fleet's worth. */
const VERIFIED_CACHE_SIZE = 4096;

export class NodeCa {
  private readonly verified = new RecentCache<string, VerifiedCertificate>(VERIFIED_CACHE_SIZE);

  private constructor(
    readonly certificatePem: string,
    private readonly certificate: Pkijs.Certificate,
    private readonly privateKey: webcrypto.CryptoKey,
    private readonly publicKey: KeyObject,
    private readonly keyId: Uint8Array,
  ) {}

  static async fromStored(stored: StoredCa): Promise<NodeCa> {
    const pkijs = pki();
    const der = fromPem(stored.certificatePem, ['CERTIFICATE'], 'node CA certificate');
    const certificate = pkijs.Certificate.fromBER(exactBuffer(der));
    const privateKey = await webcrypto.subtle.importKey('pkcs8', Buffer.from(stored.privateKeyPkcs8, 'base64'), ecdsaP256, false, ['sign']);
    const spkiDer = new Uint8Array(certificate.subjectPublicKeyInfo.toSchema().toBER(false));
    return new NodeCa(stored.certificatePem, certificate, privateKey, publicKeyFromSpki(spkiDer), keyIdentifier(certificate.subjectPublicKeyInfo));
  }

  static async create(now = new Date()): Promise<StoredCa> {
    const pkijs = pki();
    const keys = (await webcrypto.subtle.generateKey(ecdsaP256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const certificate = new pkijs.Certificate();
    certificate.version = 2;
    certificate.serialNumber = randomSerial().integer;
    certificate.subject = distinguishedName(CA_NAME);
    certificate.issuer = distinguishedName(CA_NAME);
    certificate.notBefore.value = new Date(now.getTime() - BACKDATE_MS);
    const notAfter = new Date(now);
    notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CA_VALIDITY_YEARS);
    certificate.notAfter.value = notAfter;
    await certificate.subjectPublicKeyInfo.importKey(keys.publicKey as unknown as PkiCryptoKey);
    certificate.extensions = caExtensions(keyIdentifier(certificate.subjectPublicKeyInfo));
    await certificate.sign(keys.privateKey as unknown as PkiCryptoKey, 'SHA-256');
    const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
    return { certificatePem: toPem('CERTIFICATE', certificate.toSchema().toBER(false)), privateKeyPkcs8: Buffer.from(pkcs8).toString('base64') };
  }

  /** Signs a node certificate for `spkiDer` (the key from the agent's CSR). */
  async issue(spkiDer: Uint8Array, identity: NodeIdentity, validitySeconds: number, now = new Date()): Promise<IssuedCertificate> {
    const subject: Array<[string, string]> = [
      ...(identity.siteId ? ([[OID.locality, identity.siteId]] as Array<[string, string]>) : []),
      [OID.organizationalUnit, identity.role],
      [OID.commonName, identity.nodeId],
    ];
    return this.sign(spkiDer, subject, validitySeconds, now, (keys) => leafExtensions({ ...keys, uri: identityUri(identity) }));
  }

  /** Signs a server certificate for a control-plane endpoint agents dial (the agent gateway), so they pin this CA. */
  async issueServer(spkiDer: Uint8Array, dnsNames: string[], validitySeconds: number, now = new Date()): Promise<IssuedCertificate> {
    const subject: Array<[string, string]> = [
      [OID.organization, 'Ironflow'],
      [OID.commonName, dnsNames[0] ?? 'ironflow'],
    ];
    return this.sign(spkiDer, subject, validitySeconds, now, (keys) => serverExtensions({ ...keys, dnsNames }));
  }

  private async sign(
    spkiDer: Uint8Array,
    subject: Array<[string, string]>,
    validitySeconds: number,
    now: Date,
    extensions: (keys: { subjectKeyId: Uint8Array; authorityKeyId: Uint8Array }) => Pkijs.Extension[],
  ): Promise<IssuedCertificate> {
    const pkijs = pki();
    const certificate = new pkijs.Certificate();
    const serial = randomSerial();
    certificate.version = 2;
    certificate.serialNumber = serial.integer;
    certificate.issuer = this.certificate.subject;
    certificate.subject = distinguishedName(subject);
    certificate.notBefore.value = new Date(now.getTime() - BACKDATE_MS);
    certificate.notAfter.value = new Date(now.getTime() + validitySeconds * 1000);
    const spkiAsn = asn1js.fromBER(exactBuffer(spkiDer));
    certificate.subjectPublicKeyInfo = new pkijs.PublicKeyInfo({ schema: spkiAsn.result });
    certificate.extensions = extensions({ subjectKeyId: keyIdentifier(certificate.subjectPublicKeyInfo), authorityKeyId: this.keyId });
    await certificate.sign(this.privateKey as unknown as PkiCryptoKey, 'SHA-256');
    const der = new Uint8Array(certificate.toSchema().toBER(false));
    // pkijs encodes times at second precision: report what the certificate says.
    return {
      pem: toPem('CERTIFICATE', der),
      serial: serial.hex,
      fingerprint: fingerprintOf(der),
      notBefore: certificate.notBefore.value,
      notAfter: certificate.notAfter.value,
    };
  }

  /**
   * A certificate this CA signed, with the identity in it; undefined for anything else
   * (another CA's, malformed, tampered, or one without our identity URI). What the bytes say
   * never changes, so a certificate that verified is not parsed and verified again on its
   * agent's next request (a tenth of the API's CPU with 1,000 agents); what may change
   * (revoked, expired, the node deleted) the caller checks every time.
   */
  verifyIssued(pem: string, path = 'certificate'): VerifiedCertificate | undefined {
    const known = this.verified.get(pem);
    if (known) return known;
    const verified = this.verifyUncached(pem, path);
    if (verified) this.verified.set(pem, verified);
    return verified;
  }

  // Parsed by Node's own X.509 code (OpenSSL), not pkijs: about 0.5 ms a certificate against
  // 3 ms (bench/README.md), paid for every certificate an agent joins with. X509_verify also
  // refuses a certificate whose outer signature algorithm differs from the one it signs.
  private verifyUncached(pem: string, path: string): VerifiedCertificate | undefined {
    const der = fromPem(pem, ['CERTIFICATE'], path);
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(der);
      if (!certificate.verify(this.publicKey)) return undefined;
    } catch {
      return undefined;
    }
    const identity = sanUris(certificate.subjectAltName)
      .map(parseIdentityUri)
      .find((i) => i !== undefined);
    if (!identity) return undefined;
    const publicKey = certificate.publicKey;
    return {
      serial: certificate.serialNumber.toLowerCase(),
      fingerprint: fingerprintOf(der),
      notBefore: new Date(certificate.validFrom),
      notAfter: new Date(certificate.validTo),
      identity,
      spkiDer: new Uint8Array(publicKey.export({ type: 'spki', format: 'der' })),
      publicKey,
    };
  }
}

/**
 * The URIs among a certificate's subject alternative names as Node lists them ("URI:a, DNS:b").
 * Node quotes a name holding a separator, so a quoted piece is never taken for a whole URI: an
 * identity URI has no quote (core/pki/identity.ts).
 */
function sanUris(subjectAltName: string | undefined): string[] {
  return (subjectAltName ?? '')
    .split(', ')
    .filter((name) => name.startsWith('URI:'))
    .map((name) => name.slice('URI:'.length));
}

/**
 * The node CA of this database, created on first start. Two processes starting at once may
 * both create one: each then uses the oldest stored, and the loser's is removed.
 */
export async function loadOrCreateNodeCa(db: DbOrTx, secrets: SecretStore, dataDir?: string): Promise<NodeCa> {
  const oldest = () => db.secret.findFirst({ where: { tenantId: ROOT_TENANT, purpose: CA_SECRET_PURPOSE }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  let row = await oldest();
  if (!row) {
    const created = await NodeCa.create();
    const ref = await secrets.put(db, { tenantId: ROOT_TENANT, purpose: CA_SECRET_PURPOSE, value: JSON.stringify(created) });
    row = await oldest();
    if (row && row.id !== ref) await secrets.delete(db, ref);
  }
  if (!row) throw new IronflowError('INTERNAL', 'the node CA could not be stored');
  const stored = JSON.parse(await secrets.get(db, row.id)) as StoredCa;
  const ca = await NodeCa.fromStored(stored);
  if (dataDir) {
    // For operators (openssl verify -CAfile .ironflow/node-ca.pem): public, so not 0600.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dataDir, 'node-ca.pem'), ca.certificatePem, { mode: 0o644 });
  }
  return ca;
}
