// diag.dcgm in the ramdisk, with the source that produced the report: a machine without GPUs
// gets an attested result saying there was nothing to diagnose (not a report of tests that
// never ran); an emulated machine's report says `emulated`; a machine with GPUs and no dcgmi
// is UNSUPPORTED, never a pass. The attestation verifies with the ramdisk's certificate over
// the result as returned, and not over anything else.
import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { dcgmStep } from '../../agent/ramdisk/steps/machine';
import type { RamdiskHardware } from '../../agent/ramdisk/hardware';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { AgentLog } from '../../agent/common/log';
import { attestationSchema, attestationSignatureValid, attestationSigningInput, splitAttested } from '../../services/attestations/attestation';
import type { JsonObject } from '../../core/plan';
import { NodeCa } from '../../services/pki/node-ca';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
let certificatePem = '';

beforeAll(async () => {
  const ca = await NodeCa.fromStored(await NodeCa.create());
  certificatePem = (await ca.issue(publicKey.export({ type: 'spki', format: 'der' }), { nodeId: 'node_dcgm', role: 'ramdisk', siteId: 'site_t' }, 3600)).pem;
});

function step(gpus: RamdiskHardware['gpus'], dcgm?: RamdiskHardware['dcgm']) {
  return dcgmStep({
    nodeId: 'node_dcgm',
    key: privateKey,
    certificatePem: () => certificatePem,
    hardware: {
      system: { productUuid: null, vendor: 't', model: 't', serial: 't', arch: 'x86_64', uefi: false, cpus: 1, memoryBytes: 1 },
      nics: [],
      disks: [],
      gpus,
      loadKexec: () => Promise.reject(new Error('this machine does not kexec')),
      ...(dcgm ? { dcgm } : {}),
    },
    client: new ControlPlaneClient('http://127.0.0.1:9'),
    log: new AgentLog(() => undefined),
    heartbeat: () => undefined,
  });
}

const input = { workflowId: 'wf', stepKey: 'steps[0]', use: 'diag.dcgm', target: { nodeId: 'node_dcgm' }, with: { level: 1 } } as never;
const context = { use: 'diag.dcgm', nodeId: 'node_dcgm', workflowId: 'wf', stepKey: 'steps[0]' };

function signatureHolds(output: JsonObject, over: typeof context): boolean {
  const { result, attestation } = splitAttested(output);
  const parsed = attestationSchema.parse(attestation);
  const der = Buffer.from(parsed.certificate, 'base64');
  return attestationSignatureValid(der, attestationSigningInput(over, { issuedAt: parsed.issuedAt, certificateDer: der }, result), parsed.signature);
}

describe('diag.dcgm on the ramdisk', () => {
  it('no GPUs: passed with no tests, source no-gpus, attested for this node, run and step only', async () => {
    const out = (await step([])(input)) as JsonObject;
    expect(out).toMatchObject({ passed: true, tests: [], source: 'no-gpus', nodeId: 'node_dcgm' });
    expect(signatureHolds(out, context)).toBe(true);
    expect(signatureHolds(out, { ...context, nodeId: 'node_other' })).toBe(false);
    expect(signatureHolds(out, { ...context, workflowId: 'wf-2' })).toBe(false);
    expect(signatureHolds(out, { ...context, stepKey: 'steps[1]' })).toBe(false);
    expect(signatureHolds({ ...out, source: 'dcgmi' }, context)).toBe(false);
  });

  it("an emulated machine's report says emulated, whatever GPUs it has", async () => {
    const out = (await step([{ model: 'Emulated GPU', uuid: 'GPU-1' }], async (level) => ({
      level,
      source: 'emulated',
      tests: [{ name: 'memory', passed: true }],
    }))(input)) as JsonObject;
    expect(out).toMatchObject({ passed: true, source: 'emulated', tests: [{ name: 'memory', passed: true }] });
    expect(signatureHolds(out, context)).toBe(true);
  });

  it('GPUs but no dcgmi and no report of the machine: UNSUPPORTED', async () => {
    await expect(step([{ model: 'pci 10de:20b0', uuid: 'pci-0000:3b:00.0' }])(input)).rejects.toMatchObject({ code: 'UNSUPPORTED' });
  });
});
