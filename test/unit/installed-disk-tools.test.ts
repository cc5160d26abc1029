// A real ramdisk's drive tools (agent/ramdisk/erase/installed-tools.ts) run as processes: a
// tool that outlives its bound is killed and named, a failing one is named with what it said
// on stderr, a missing one says the ramdisk lacks it. The "tools" here are scripts standing in
// for a drive that hangs or refuses (emulated hardware); the runner is the real one.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { installedDiskTools } from '../../agent/ramdisk/erase/installed-tools';

const bin = mkdtempSync(path.join(inject('runDir'), 'disk-tools-'));
const savedPath = process.env.PATH;

function tool(name: string, script: string): void {
  writeFileSync(path.join(bin, name), `#!/bin/sh\n${script}\n`);
  chmodSync(path.join(bin, name), 0o755);
}

beforeAll(() => {
  tool('nvme', 'exec /bin/sleep 30');
  tool('hdparm', 'echo "SG_IO: bad/missing sense data" >&2; exit 5');
  tool('blkdiscard', 'echo "$@"');
  process.env.PATH = bin; // only these three: a missing one is missing
});

afterAll(() => {
  process.env.PATH = savedPath;
});

describe('installed drive tools', () => {
  it('answers stdout', async () => {
    expect(await installedDiskTools('blkdiscard', ['--secure', '/dev/mmcblk0'], { timeoutMs: 5_000 })).toBe('--secure /dev/mmcblk0\n');
  });

  it('kills a tool that outlives its bound and names it', async () => {
    const started = Date.now();
    await expect(installedDiskTools('nvme', ['format', '/dev/nvme0n1', '--ses=2', '--force'], { timeoutMs: 300 })).rejects.toMatchObject({
      code: 'DRIVER_ERROR',
      message: 'nvme format /dev/nvme0n1 --ses=2 --force did not finish within 300 ms (killed)',
      details: { reason: 'erase-command-timeout' },
    });
    expect(Date.now() - started).toBeLessThan(20_000); // not the script's 30 s
  });

  it('a failing tool is named with its stderr', async () => {
    await expect(installedDiskTools('hdparm', ['-I', '/dev/sda'], { timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'DRIVER_ERROR',
      message: 'hdparm -I /dev/sda failed: SG_IO: bad/missing sense data',
      details: { reason: 'erase-command' },
    });
  });

  it('a missing tool says the ramdisk lacks it', async () => {
    process.env.PATH = path.join(bin, 'nowhere');
    try {
      await expect(installedDiskTools('nvme', ['id-ctrl', '/dev/nvme0n1'], { timeoutMs: 5_000 })).rejects.toMatchObject({
        details: { reason: 'erase-tool-missing' },
        message: expect.stringContaining('nvme is not installed on this ramdisk'),
      });
    } finally {
      process.env.PATH = bin;
    }
  });
});
