// The erase decisions over real drives' tool output (test/fixtures/erase): what an NVMe
// controller's Identify and an ATA drive's `hdparm -I` allow, and the commands each mode runs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ataCapabilities, ataErase, nvmeCapabilities, nvmeErase, sanitizeState } from '../../agent/ramdisk/erase/capabilities';

const fixture = (name: string) => readFileSync(path.join(__dirname, '../fixtures/erase', name), 'utf8');
const sn730 = fixture('wdc-sn730.id-ctrl.json');
const withField = (json: string, field: string, value: number) => JSON.stringify({ ...(JSON.parse(json) as object), [field]: value });

describe('NVMe erase capabilities (nvme id-ctrl)', () => {
  it('a WDC SN730 formats with cryptographic erase (FNA bit 2) and user data erase', () => {
    const caps = nvmeCapabilities(sn730);
    expect(caps).toEqual({ model: 'WDC PC SN730 SDBQNTY-256G-1001', format: true, cryptoFormat: true, sanitizeCrypto: true, sanitizeBlockErase: true });
    expect(nvmeErase(caps!, '/dev/nvme0n1', 'crypto-erase')).toMatchObject({
      procedure: { commands: [{ command: 'nvme', args: ['format', '/dev/nvme0n1', '--ses=2', '--force'] }] },
    });
    expect(nvmeErase(caps!, '/dev/nvme0n1', 'secure-erase')).toMatchObject({
      procedure: { commands: [{ command: 'nvme', args: ['format', '/dev/nvme0n1', '--ses=1', '--force'] }] },
    });
  });

  it('without FNA bit 2 crypto-erase is unsupported, naming the bit and the Sanitize it could use; secure-erase still formats', () => {
    const caps = nvmeCapabilities(withField(sn730, 'fna', 0))!;
    expect(nvmeErase(caps, '/dev/nvme0n1', 'crypto-erase')).toEqual({
      unsupported: expect.stringMatching(/does not support cryptographic erase in Format NVM \(FNA bit 2 clear\); it offers Sanitize crypto erase/),
    });
    expect(nvmeErase(caps, '/dev/nvme0n1', 'secure-erase')).toHaveProperty('procedure');
  });

  it('a controller without Format NVM (OACS bit 1) has neither', () => {
    const caps = nvmeCapabilities(withField(withField(sn730, 'oacs', 0x4), 'sanicap', 0))!;
    expect(nvmeErase(caps, '/dev/nvme0n1', 'secure-erase')).toEqual({ unsupported: 'the NVMe controller does not support Format NVM (OACS bit 1 clear)' });
  });

  it('output that is not an Identify Controller is no answer', () => {
    expect(nvmeCapabilities('not json')).toBeNull();
    expect(nvmeCapabilities('{"mn":"x"}')).toBeNull();
  });
});

describe('ATA erase capabilities (hdparm -I)', () => {
  it("an Intel 330 (security supported, not frozen, no Sanitize): secure-erase by Security Erase with the drive's estimate; no crypto-erase", () => {
    const caps = ataCapabilities(fixture('intel-ssdsc2ct240a4.hdparm-I.txt'))!;
    expect(caps).toMatchObject({
      model: 'INTEL SSDSC2CT240A4',
      security: true,
      enabled: false,
      locked: false,
      frozen: false,
      enhancedErase: true,
      eraseMinutes: 4,
      enhancedEraseMinutes: 2,
      sanitizeCrypto: false,
    });
    const secure = ataErase(caps, '/dev/sda', 'secure-erase');
    expect(secure).toMatchObject({
      procedure: {
        commands: [
          { args: ['--user-master', 'u', '--security-set-pass', 'ironflow', '/dev/sda'] },
          { args: ['--user-master', 'u', '--security-erase', 'ironflow', '/dev/sda'] },
        ],
        timeoutMs: 18 * 60_000,
      },
    });
    expect(ataErase(caps, '/dev/sda', 'crypto-erase')).toEqual({ unsupported: expect.stringContaining('does not support Sanitize CRYPTO SCRAMBLE') });
  });

  it('a Micron 5300 frozen by its BIOS: secure-erase unsupported (frozen, and how to unfreeze); crypto-erase by Sanitize CRYPTO SCRAMBLE', () => {
    const caps = ataCapabilities(fixture('micron-5300.hdparm-I.txt'))!;
    expect(caps).toMatchObject({ model: 'Micron_5300_MTFDDAK1T9TDS', security: true, frozen: true, sanitizeCrypto: true });
    expect(ataErase(caps, '/dev/sda', 'secure-erase')).toEqual({ unsupported: expect.stringContaining('security-frozen') });
    expect(ataErase(caps, '/dev/sda', 'crypto-erase')).toMatchObject({
      procedure: { commands: [{ command: 'hdparm', args: ['--yes-i-know-what-i-am-doing', '--sanitize-crypto-scramble', '/dev/sda'] }], pollSanitize: true },
    });
  });

  it('reads the sanitize status hdparm prints', () => {
    expect(sanitizeState('Sanitize status:\n    State:    SD2 Sanitize operation In Process\n    Progress: 0x7fff (50%)')).toBe('running');
    expect(sanitizeState('Sanitize status:\n    State:    SD0 Sanitize Idle\n    Last Sanitize Operation Completed Without Error')).toBe('done');
    expect(sanitizeState('Sanitize status:\n    State:    SD3 Sanitize Operation Failed')).toBe('failed');
  });

  it('output that is not an ATA identify is no answer', () => {
    expect(ataCapabilities('/dev/sda:\n SG_IO: bad/missing sense data')).toBeNull();
  });
});
