// diag.dcgm in the ramdisk: a machine without GPUs gets a signed result saying there was
// nothing to diagnose (not a report of tests that never ran); a machine with GPUs and neither
// dcgmi nor a report of its own is UNSUPPORTED, never a pass.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dcgmStep } from '../../agent/ramdisk/steps/machine';
import type { RamdiskHardware } from '../../agent/ramdisk/hardware';
import { ControlPlaneClient } from '../../agent/site/control-plane-client';
import { AgentLog } from '../../agent/site/log';
import { nodeSignatureValid } from '../../core/boot/node-signed';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

function step(gpus: RamdiskHardware['gpus']) {
  return dcgmStep({
    nodeId: 'node_dcgm',
    key: privateKey,
    certificatePem: () => '',
    hardware: { system: { productUuid: null, vendor: 't', model: 't', serial: 't', arch: 'x86_64', uefi: false, cpus: 1, memoryBytes: 1 }, nics: [], disks: [], gpus, kexec: async () => undefined },
    client: new ControlPlaneClient('http://127.0.0.1:9'),
    log: new AgentLog(() => undefined),
    heartbeat: () => undefined,
  });
}

const input = { workflowId: 'wf', stepKey: 'steps[0]', use: 'diag.dcgm', target: { nodeId: 'node_dcgm' }, with: { level: 1 } } as never;

describe('diag.dcgm on the ramdisk', () => {
  it('no GPUs: passed with no tests, source no-gpus, signed by the node key', async () => {
    const out = (await step([])(input)) as { passed: boolean; tests: unknown[]; source: string; signed: { payload: string; purpose: string; signature: string } };
    expect(out).toMatchObject({ passed: true, tests: [], source: 'no-gpus' });
    expect(nodeSignatureValid(publicKey.export({ type: 'spki', format: 'der' }), out.signed)).toBe(true);
  });

  it('GPUs but no dcgmi and no report of the machine: UNSUPPORTED', async () => {
    await expect(step([{ model: 'pci 10de:20b0', uuid: 'pci-0000:3b:00.0' }])(input)).rejects.toMatchObject({ code: 'UNSUPPORTED' });
  });
});
