// The node CA verifies a certificate's bytes once (services/pki/node-ca.ts): a certificate that
// verified is answered from the cache on its agent's next request, and nothing that did not
// verify, nor any other bytes, ever is.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromPem, toPem } from '../../core/pki/pem';
import { NodeCa } from '../../services/pki/node-ca';

const spki = () => new Uint8Array(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' }));
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
});
