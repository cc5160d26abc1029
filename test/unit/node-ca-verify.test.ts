// The node CA verifies a certificate's bytes once (services/pki/node-ca.ts): a certificate that
// verified is answered from the cache on its agent's next request, and nothing that did not
// verify, nor any other bytes, ever is. What it reads from a certificate is what the CA issued.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromPem, toPem } from '../../core/pki/pem';
import { NodeCa } from '../../services/pki/node-ca';

const spki = (type: 'ec' | 'ed25519' = 'ec') =>
  new Uint8Array(
    (type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519')).publicKey.export({ type: 'spki', format: 'der' }),
  );
const identity = { nodeId: 'node_verify', role: 'site', siteId: 'site_verify' };

describe('the node CA verifying a certificate', () => {
  it('answers the same identity again, and refuses a tampered copy and another CA’s certificate after it', async () => {
    const ca = await NodeCa.fromStored(await NodeCa.create());
    const other = await NodeCa.fromStored(await NodeCa.create());
    const issued = await ca.issue(spki(), identity, 600);

    const first = ca.verifyIssued(issued.pem);
    expect(first?.identity).toEqual(identity);
    expect(ca.verifyIssued(issued.pem)).toEqual(first);

    // The last byte is the signature's: the bytes no longer verify.
    const der = fromPem(issued.pem, ['CERTIFICATE'], 'test');
    const tampered = Uint8Array.from(der);
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 0x01;
    expect(ca.verifyIssued(toPem('CERTIFICATE', tampered))).toBeUndefined();
    expect(ca.verifyIssued((await other.issue(spki(), identity, 600)).pem)).toBeUndefined();
    expect(ca.verifyIssued(issued.pem)?.identity).toEqual(identity);
  });

  it('reads the serial, fingerprint, validity and key the CA issued, for an ECDSA and an Ed25519 key', async () => {
    const ca = await NodeCa.fromStored(await NodeCa.create());
    for (const type of ['ec', 'ed25519'] as const) {
      const key = spki(type);
      const issued = await ca.issue(key, { nodeId: 'node_fields', role: 'ramdisk', siteId: null }, 7200);
      const verified = ca.verifyIssued(issued.pem);
      expect(verified).toMatchObject({
        serial: issued.serial,
        fingerprint: issued.fingerprint,
        // A certificate's times are whole seconds.
        notBefore: new Date(Math.floor(issued.notBefore.getTime() / 1000) * 1000),
        notAfter: new Date(Math.floor(issued.notAfter.getTime() / 1000) * 1000),
        identity: { nodeId: 'node_fields', role: 'ramdisk', siteId: null },
      });
      expect(Buffer.from(verified?.spkiDer ?? []).equals(Buffer.from(key))).toBe(true);
      expect(verified?.publicKey.asymmetricKeyType).toBe(type);
    }
  });

  it('refuses its own certificate without an identity URI, and bytes that are no certificate', async () => {
    const ca = await NodeCa.fromStored(await NodeCa.create());
    const server = await ca.issueServer(spki(), ['gateway.example', 'localhost'], 600);
    expect(ca.verifyIssued(server.pem)).toBeUndefined();
    expect(ca.verifyIssued(toPem('CERTIFICATE', Uint8Array.from([0x30, 0x03, 0x02, 0x01, 0x01])))).toBeUndefined();
  });
});
