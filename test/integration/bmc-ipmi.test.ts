// The IPMI driver (ipmitool, lanplus) against OpenIPMI's ipmi_sim. Needs `ipmitool` and
// `ipmi_sim` on PATH: scripts/test-deps.sh.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createBmcDriver, type BmcDriver } from '../../agent/bmc';
import { virtualMediaOf } from '../../agent/bmc/driver';
import { IronflowError } from '../../core/errors';
import { startIpmiSim, type RunningIpmiSim } from '../helpers/ipmi-sim';

let sim: RunningIpmiSim;
let spyDir: string;
let ipmitoolSpy: string;

beforeAll(async () => {
  sim = await startIpmiSim();
  // A wrapper that records ipmitool's argv and whether the password came by environment.
  spyDir = mkdtempSync(path.join(inject('runDir'), 'ironflow-ipmitool-'));
  ipmitoolSpy = path.join(spyDir, 'ipmitool');
  writeFileSync(
    ipmitoolSpy,
    `#!/bin/sh\necho "argv: $*" >> "${spyDir}/log"\n[ -n "$IPMI_PASSWORD" ] && echo "env: IPMI_PASSWORD set" >> "${spyDir}/log"\nexec ipmitool "$@"\n`,
  );
  chmodSync(ipmitoolSpy, 0o755);
});
afterAll(async () => sim?.close());

function driver(password = sim.password): BmcDriver {
  return createBmcDriver(
    { driver: 'ipmi', address: sim.address },
    { username: sim.username, password },
    { ipmitool: ipmitoolSpy, attemptTimeoutSeconds: 1, retries: 1 },
  );
}

describe('IPMI driver against ipmi_sim', () => {
  it('powers on, cycles, resets and powers off as the chassis reports', async () => {
    const bmc = driver();
    expect(await bmc.power.get()).toBe('off');
    await bmc.power.set('on');
    expect(sim.chassis('power')).toBe('1');
    expect(await bmc.power.get()).toBe('on');
    await bmc.power.set('on'); // already on: nothing sent
    await bmc.power.set('reset');
    expect(sim.calls()).toContain('set reset 1');
    await bmc.power.set('off');
    expect(await bmc.power.get()).toBe('off');
    // A cycle of a machine that is off powers it on (BMCs refuse a cycle when off).
    await bmc.power.set('cycle');
    expect(await bmc.power.get()).toBe('on');
    await bmc.power.set('cycle');
    expect(sim.calls().filter((c) => c === 'set power 0').length).toBeGreaterThanOrEqual(2);
    expect(sim.calls().filter((c) => c === 'set power 1').length).toBe(2);
  });

  it('sets the boot device, one-time and persistent', async () => {
    const bmc = driver();
    await bmc.management.setBoot({ device: 'pxe', persistent: false });
    expect(sim.chassis('boot')).toBe('pxe');
    await bmc.management.setBoot({ device: 'cd', persistent: true });
    expect(sim.chassis('boot')).toBe('cdrom');
    await bmc.management.setBoot({ device: 'disk', persistent: true });
    // ipmi_sim keeps the device but reports the boot flags as not valid, so nothing reads back.
    expect(await bmc.management.getBoot()).toBeNull();
    const log = readFileSync(path.join(spyDir, 'log'), 'utf8');
    expect(log).toContain('chassis bootdev disk options=persistent');
    expect(log).toMatch(/chassis bootdev pxe\n/);
  });

  it('inspects the system GUID, as IPMI prints it (bytes reversed), and no MACs', async () => {
    const inspection = await driver().inspect();
    const reversed = Buffer.from(sim.guidHex, 'hex').reverse().toString('hex');
    const expected = `${reversed.slice(0, 8)}-${reversed.slice(8, 12)}-${reversed.slice(12, 16)}-${reversed.slice(16, 20)}-${reversed.slice(20)}`;
    expect(inspection).toEqual({ systemUuid: expected, pxeMacs: [], ips: [] });
  });

  it('has no virtual media', () => {
    expect(() => virtualMediaOf(driver())).toThrowError(expect.objectContaining({ code: 'UNSUPPORTED' }));
  });

  it('surfaces a wrong password as DRIVER_ERROR with ipmitool’s message, never the password', async () => {
    const wrong = 'wrong-ipmi-pw-42';
    const error = (await driver(wrong)
      .power.get()
      .catch((e: unknown) => e)) as IronflowError;
    expect(error).toBeInstanceOf(IronflowError);
    expect(error.code).toBe('DRIVER_ERROR');
    expect(error.message).toMatch(/Unable to establish IPMI v2 \/ RMCP\+ session/);
    expect(JSON.stringify(error)).not.toContain(wrong);
  });

  it('never puts the password on ipmitool’s command line', () => {
    const log = readFileSync(path.join(spyDir, 'log'), 'utf8');
    expect(log).toContain('env: IPMI_PASSWORD set');
    expect(log).toContain(' -E ');
    expect(log).not.toContain(sim.password);
    expect(log).not.toContain('wrong-ipmi-pw-42');
  });

  it('names a missing ipmitool', async () => {
    const bmc = createBmcDriver(
      { driver: 'ipmi', address: sim.address },
      { username: sim.username, password: sim.password },
      { ipmitool: '/nonexistent/ipmitool' },
    );
    const error = (await bmc.power.get().catch((e: unknown) => e)) as IronflowError;
    expect(error.code).toBe('DRIVER_ERROR');
    expect(error.message).toMatch(/ipmitool is not installed/);
  });
});
