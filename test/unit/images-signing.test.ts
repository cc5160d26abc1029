// The signing input's exact bytes and the signature check: Ed25519, ECDSA P-256 in P1363
// and DER, real keys from node:crypto, and a signature made by the openssl command line.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { imageSigningInput } from '../../core/images/signing-input';
import { parseSignerPublicKey, signatureMatches } from '../../services/images/verify';

const image = { kind: 'os', ref: 'ubuntu-24.04-server@2026.09', format: 'raw', compression: 'zstd', sha256: 'ab'.repeat(32) };
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();

describe('imageSigningInput', () => {
  it('is bc-image-v1, kind, ref, format, compression and the lower-case digest, one per line', () => {
    const text = imageSigningInput({ ...image, sha256: 'AB'.repeat(32) }).toString('utf8');
    expect(text).toBe(`bc-image-v1\nos\nubuntu-24.04-server@2026.09\nraw\nzstd\n${'ab'.repeat(32)}`);
  });
});

describe('signatureMatches', () => {
  const message = imageSigningInput(image);

  it('verifies Ed25519 and refuses a signature over other fields', () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const key = parseSignerPublicKey(pem(publicKey));
    expect(key.algorithm).toBe('ed25519');
    const signature = sign(null, message, privateKey).toString('base64');
    expect(signatureMatches(key, message, signature)).toBe(true);
    expect(signatureMatches(key, imageSigningInput({ ...image, kind: 'ramdisk' }), signature)).toBe(false);
    const other = generateKeyPairSync('ed25519');
    expect(signatureMatches(parseSignerPublicKey(pem(other.publicKey)), message, signature)).toBe(false);
  });

  it('verifies ECDSA P-256 over SHA-256 in IEEE P1363 and in DER', () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = parseSignerPublicKey(pem(publicKey));
    expect(key.algorithm).toBe('ecdsa-p256');
    const p1363 = sign('sha256', message, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    const der = sign('sha256', message, { key: privateKey, dsaEncoding: 'der' });
    expect(p1363.length).toBe(64);
    expect(der[0]).toBe(0x30);
    expect(signatureMatches(key, message, p1363.toString('base64'))).toBe(true);
    expect(signatureMatches(key, message, der.toString('base64'))).toBe(true);
    const flipped = Buffer.from(p1363);
    flipped[10] = (flipped[10] as number) ^ 1;
    expect(signatureMatches(key, message, flipped.toString('base64'))).toBe(false);
    expect(signatureMatches(key, message, 'not base64!')).toBe(false);
  });

  it('refuses keys of other algorithms and things that are not keys', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(() => parseSignerPublicKey(pem(rsa.publicKey))).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    expect(() => parseSignerPublicKey(pem(p384.publicKey))).toThrow(/Ed25519 or ECDSA P-256/);
    expect(() => parseSignerPublicKey('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n')).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });

  it('verifies what openssl signs from the documented text (Ed25519 with pkeyutl, ECDSA with dgst)', () => {
    const dir = mkdtempSync(path.join(inject('runDir'), 'img-sign-'));
    // The signing input written by printf, as docs/images.md shows, not by our function.
    const input = path.join(dir, 'input');
    execFileSync('sh', ['-c', `printf 'bc-image-v1\\n%s\\n%s\\n%s\\n%s\\n%s' os '${image.ref}' raw zstd '${image.sha256}' > '${input}'`]);
    expect(readFileSync(input).equals(message)).toBe(true);

    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', path.join(dir, 'ed.pem')]);
    execFileSync('openssl', ['pkey', '-in', path.join(dir, 'ed.pem'), '-pubout', '-out', path.join(dir, 'ed.pub.pem')]);
    execFileSync('openssl', ['pkeyutl', '-sign', '-inkey', path.join(dir, 'ed.pem'), '-rawin', '-in', input, '-out', path.join(dir, 'ed.sig')]);
    const edKey = parseSignerPublicKey(readFileSync(path.join(dir, 'ed.pub.pem'), 'utf8'));
    expect(signatureMatches(edKey, message, readFileSync(path.join(dir, 'ed.sig')).toString('base64'))).toBe(true);

    execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', path.join(dir, 'ec.pem')]);
    execFileSync('openssl', ['ec', '-in', path.join(dir, 'ec.pem'), '-pubout', '-out', path.join(dir, 'ec.pub.pem')], { stdio: 'ignore' });
    execFileSync('openssl', ['dgst', '-sha256', '-sign', path.join(dir, 'ec.pem'), '-out', path.join(dir, 'ec.sig'), input]);
    const ecKey = parseSignerPublicKey(readFileSync(path.join(dir, 'ec.pub.pem'), 'utf8'));
    expect(signatureMatches(ecKey, message, readFileSync(path.join(dir, 'ec.sig')).toString('base64'))).toBe(true);
    writeFileSync(path.join(dir, 'other'), Buffer.concat([message, Buffer.from('\n')]));
    expect(signatureMatches(ecKey, readFileSync(path.join(dir, 'other')), readFileSync(path.join(dir, 'ec.sig')).toString('base64'))).toBe(false);
  });
});
