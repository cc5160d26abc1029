// The X.509 pieces both the CA certificate and node certificates are made of.
import { createHash, randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';
import type * as Pkijs from 'pkijs';
import { pki } from './engine';

export const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  locality: '2.5.4.7',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

/**
 * A distinguished name with one attribute per RDN (pkijs alone would put them all in one
 * multi-valued RDN, which tools print as `CN = a + OU = b`).
 */
export function distinguishedName(attributes: Array<[string, string]>): Pkijs.RelativeDistinguishedNames {
  const pkijs = pki();
  const sets = attributes.map(
    ([type, value]) => new asn1js.Set({ value: [new pkijs.AttributeTypeAndValue({ type, value: new asn1js.Utf8String({ value }) }).toSchema()] }),
  );
  const der = new asn1js.Sequence({ value: sets }).toBER(false);
  return new pkijs.RelativeDistinguishedNames({ schema: asn1js.fromBER(der).result });
}

/** A positive 127-bit serial (the top bit clear so it never reads as negative). */
export function randomSerial(): { integer: asn1js.Integer; hex: string } {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] as number) & 0x7f) | 0x40;
  return { integer: new asn1js.Integer({ valueHex: bytes }), hex: bytes.toString('hex') };
}

/** RFC 5280 method 1: SHA-1 of the subjectPublicKey bits. */
export function keyIdentifier(spki: Pkijs.PublicKeyInfo): Uint8Array {
  return new Uint8Array(createHash('sha1').update(spki.subjectPublicKey.valueBlock.valueHexView).digest());
}

function extension(extnID: string, critical: boolean, value: { toSchema(): asn1js.AsnType } | asn1js.AsnType): Pkijs.Extension {
  const pkijs = pki();
  const schema = 'toSchema' in value ? value.toSchema() : value;
  return new pkijs.Extension({ extnID, critical, extnValue: schema.toBER(false) });
}

/** keyUsage bits, numbered as in RFC 5280 (0 = digitalSignature, 5 = keyCertSign, 6 = cRLSign). */
function keyUsage(bits: number[]): asn1js.BitString {
  let byte = 0;
  for (const bit of bits) byte |= 0x80 >> bit;
  const unused = Math.min(...bits.map((b) => 7 - b));
  return new asn1js.BitString({ valueHex: new Uint8Array([byte]).buffer, unusedBits: unused });
}

export function caExtensions(subjectKeyId: Uint8Array): Pkijs.Extension[] {
  const pkijs = pki();
  return [
    extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: true, pathLenConstraint: 0 })),
    extension(OID.keyUsage, true, keyUsage([5, 6])),
    extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: subjectKeyId })),
  ];
}

interface LeafKeys {
  subjectKeyId: Uint8Array;
  authorityKeyId: Uint8Array;
}

function endEntityExtensions(keys: LeafKeys, purpose: string, names: Pkijs.GeneralName[]): Pkijs.Extension[] {
  const pkijs = pki();
  return [
    extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false })),
    extension(OID.keyUsage, true, keyUsage([0])),
    extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: [purpose] })),
    extension(OID.subjectAltName, false, new pkijs.GeneralNames({ names })),
    extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: keys.subjectKeyId })),
    extension(
      OID.authorityKeyIdentifier,
      false,
      new pkijs.AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: keys.authorityKeyId }) }),
    ),
  ];
}

/** A node's certificate: client authentication, its identity as a URI name. */
export function leafExtensions(options: LeafKeys & { uri: string }): Pkijs.Extension[] {
  return endEntityExtensions(options, OID.clientAuth, [new (pki().GeneralName)({ type: 6, value: options.uri })]);
}

/** A control-plane server's certificate (the agent gateway): server authentication, DNS names. */
export function serverExtensions(options: LeafKeys & { dnsNames: string[] }): Pkijs.Extension[] {
  const pkijs = pki();
  return endEntityExtensions(
    options,
    OID.serverAuth,
    options.dnsNames.map((value) => new pkijs.GeneralName({ type: 2, value })),
  );
}
