// boot.kexec in the ramdisk (agent/ramdisk/steps/machine.ts): the installed OS is loaded before
// the step answers, so a machine that cannot kexec (no boot entry on its disk, no kexec) fails
// the step with why, instead of answering and leaving the run to wait out its rejoin; one that
// can answers, then starts it. What it loads from a disk is test/integration/kexec-target.test.ts.
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { kexecStep } from '../../agent/ramdisk/steps/machine';
import type { LoadedKexec } from '../../agent/ramdisk/hardware';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { AgentLog } from '../../agent/common/log';
import { IronflowError } from '../../core/errors';

function step(loadKexec: () => Promise<LoadedKexec>) {
  return kexecStep({
    nodeId: 'node_kexec',
    key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    certificatePem: () => '',
    hardware: {
      system: { productUuid: null, vendor: 't', model: 't', serial: 't', arch: 'x86_64', uefi: true, cpus: 1, memoryBytes: 1 },
      nics: [],
      disks: [],
      gpus: [],
      loadKexec,
    },
    client: new ControlPlaneClient('http://127.0.0.1:9'),
    log: new AgentLog(() => undefined),
    heartbeat: () => undefined,
  });
}

const input = { workflowId: 'wf', stepKey: 'steps[3]', use: 'boot.kexec', target: { nodeId: 'node_kexec' }, with: {} } as never;

describe('boot.kexec on the ramdisk', () => {
  it('fails when the installed OS cannot be loaded, and starts nothing', async () => {
    const refusal = new IronflowError('UNSUPPORTED', 'no boot entry to kexec on /dev/vda', { reason: 'no-boot-entry' });
    await expect(step(() => Promise.reject(refusal))(input)).rejects.toBe(refusal);
  });

  it('answers once the OS is loaded, then starts it', async () => {
    const started: string[] = [];
    const answer = await step(async () => ({ source: 'partition 1, "loader/entries/os.conf"', start: async () => void started.push('kexec -e') }))(input);
    expect(answer).toEqual({ kexec: true });
    expect(started).toEqual([]);
    await sleep(200);
    expect(started).toEqual(['kexec -e']);
  });
});
