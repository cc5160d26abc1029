// What checking an attested result costs the control plane: signing (the agent) and
// verifying (rebuild the canonical bytes, check the signature with the certificate's key) a
// disk.wipe result, for ECDSA P-256 and Ed25519 node keys and for 1 and 24 disks, beside the
// format it replaced in the same run (a signature over JSON.stringify, no canonical form, no
// binding to node, run and step). The database lookup (one unique-index read by fingerprint)
// is not in it.
//
//   npx tsx bench/attestations.ts [--iterations 2000]
import { generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { parseArgs } from 'node:util';
import { attestationSignatureValid, attestationSigningInput, attestResult, splitAttested } from '../services/attestations/attestation';
import { NodeCa } from '../services/pki/node-ca';
import type { JsonObject } from '../core/plan';

const { values } = parseArgs({ options: { iterations: { type: 'string', default: '2000' } } });
const iterations = Number(values.iterations);
const context = { use: 'disk.wipe', nodeId: 'node_bench', workflowId: 'node:node_bench:releasing:1', stepKey: 'steps[2]' };

function wipeResult(disks: number): JsonObject {
  return {
    nodeId: context.nodeId,
    workflowId: context.workflowId,
    mode: 'quick',
    disks: Array.from({ length: disks }, (_, i) => ({
      name: `nvme${i}n1`,
      mode: 'quick',
      method: 'blkdiscard, zeroed 3 ranges',
      bytes: 3_840_755_982_336,
      readBack: true,
    })),
    wipedAt: new Date().toISOString(),
  };
}

function perSecond(body: () => void): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) body();
  return iterations / (Number(process.hrtime.bigint() - started) / 1e9);
}

const ca = await NodeCa.fromStored(await NodeCa.create());
const rows: string[] = [];
for (const [name, keys] of [
  ['ECDSA P-256', generateKeyPairSync('ec', { namedCurve: 'P-256' })],
  ['Ed25519', generateKeyPairSync('ed25519')],
] as const) {
  const certificatePem = (
    await ca.issue(keys.publicKey.export({ type: 'spki', format: 'der' }), { nodeId: context.nodeId, role: 'ramdisk', siteId: 'site_bench' }, 3600)
  ).pem;
  const digest = (key: KeyObject) => (key.asymmetricKeyType === 'ed25519' ? null : 'sha256');
  for (const disks of [1, 24]) {
    const result = wipeResult(disks);
    const attested = attestResult(keys.privateKey, certificatePem, context, result);
    const signs = perSecond(() => attestResult(keys.privateKey, certificatePem, context, result));
    const verifies = perSecond(() => {
      const { result: signed, attestation } = splitAttested(attested);
      const { certificate, issuedAt, signature } = attestation as { certificate: string; issuedAt: string; signature: string };
      const der = Buffer.from(certificate, 'base64');
      if (!attestationSignatureValid(der, attestationSigningInput(context, { issuedAt, certificateDer: der }, signed), signature))
        throw new Error('did not verify');
    });
    // The replaced format: the purpose and JSON.stringify of the result, signed with the same key.
    const plain = Buffer.from(`ironflow-disk-wipe-v1\n${JSON.stringify(result)}`);
    const plainSignature = sign(digest(keys.privateKey), plain, keys.privateKey);
    const plainSigns = perSecond(() => sign(digest(keys.privateKey), Buffer.from(`ironflow-disk-wipe-v1\n${JSON.stringify(result)}`), keys.privateKey));
    const plainVerifies = perSecond(() =>
      verify(digest(keys.publicKey), Buffer.from(`ironflow-disk-wipe-v1\n${JSON.stringify(result)}`), keys.publicKey, plainSignature),
    );
    rows.push(
      `| ${name} | ${disks} | ${Math.round(signs)} | ${Math.round(verifies)} (${(1000 / verifies).toFixed(3)} ms) | ${Math.round(plainSigns)} | ${Math.round(plainVerifies)} |`,
    );
  }
}
process.stdout.write(
  `| key | disks | attest sign/s | attest verify/s (per result) | old format sign/s | old format verify/s |\n| --- | --- | --- | --- | --- | --- |\n${rows.join('\n')}\n`,
);
