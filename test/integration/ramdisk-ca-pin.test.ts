// A ramdisk checks the control plane's CA against the pin on its kernel command line (if.ca)
// BEFORE its discovery token leaves the machine: with a wrong pin nothing is posted to
// /v1/join (no join is refused, because none was made); with the right pin the same bogus
// token does reach the control plane and is refused there.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAsRamdisk } from '../../agent/ramdisk/join';
import type { RamdiskHardware } from '../../agent/ramdisk/hardware';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { AgentLog } from '../../agent/common/log';
import { fromPem } from '../../core/pki/pem';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
beforeAll(async () => {
  t = await startTestControlPlane();
}, 60_000);
afterAll(async () => t?.close());

const hardware: RamdiskHardware = {
  system: { productUuid: null, vendor: 'test', model: 'test', serial: 'x', arch: 'x86_64', uefi: false, cpus: 1, memoryBytes: 1 },
  nics: [{ mac: '52:54:00:00:00:77' }],
  disks: [],
  gpus: [],
  loadKexec: () => Promise.reject(new Error('this machine does not kexec')),
};

const refusedJoins = () => t.cp.db.event.count({ where: { type: 'security.join.refused' } });

async function joinWithPin(ca: string) {
  const params = { gateway: t.cp.url, ca, mac: '52:54:00:00:00:77', token: 'ifjt_nothere.bogus', assertion: 'bogus' };
  return joinAsRamdisk(params, hardware, new ControlPlaneClient(t.cp.url), new AgentLog(() => undefined)).catch(
    (error: Error & { code?: string; details?: Record<string, unknown> }) => error,
  );
}

describe('the ramdisk CA pin', () => {
  it('refuses a control plane whose CA is not pinned, before sending the token', async () => {
    const before = await refusedJoins();
    const error = await joinWithPin('0'.repeat(64));
    expect(error).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'ca-pin' } });
    expect(await refusedJoins()).toBe(before);
  });

  it('with the right pin, the token is sent (and this bogus one refused by the control plane)', async () => {
    const { certificate } = await new ControlPlaneClient(t.cp.url).get<{ certificate: string }>('/v1/join/ca');
    const pin = createHash('sha256')
      .update(fromPem(certificate, ['CERTIFICATE'], 'ca'))
      .digest('hex');
    const before = await refusedJoins();
    const error = await joinWithPin(pin);
    expect(error).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((error as { details?: { reason?: string } }).details?.reason).not.toBe('ca-pin');
    expect(await refusedJoins()).toBe(before + 1);
  });
});
