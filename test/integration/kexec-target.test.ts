// What boot.kexec loads on a real machine (agent/ramdisk/kexec.ts): the installed OS's kernel,
// initrds and command line, read from its boot loader's configuration on the disk's FAT
// partitions through mtools, as the ramdisk reads a deployed disk. The disks here are image
// files partitioned by sfdisk and filled by mkfs.vfat and mtools; that kexec then boots what
// it loaded is test/e2e/qemu-lifecycle.test.ts (a QEMU machine kexecs into the UEFI image).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { requireTools } from '../helpers/require-tools';
import { findKexecTarget } from '../../agent/ramdisk/kexec';

const dir = mkdtempSync(path.join(inject('runDir'), 'kexec-target-test-'));
const env = { ...process.env, MTOOLS_SKIP_CHECK: '1' };

requireTools('the kexec target test', [
  ['sfdisk', 'fdisk'],
  ['mkfs.vfat', 'dosfstools'],
  ['mcopy', 'mtools'],
]);

/** A 16 MiB disk partitioned by sfdisk; each FAT partition given files is formatted and filled (path in the partition → content). */
function disk(name: string, label: 'dos' | 'gpt', partitions: Array<{ line: string; start: number; sectors: number; files?: Record<string, string> }>): string {
  const file = path.join(dir, name);
  execFileSync('truncate', ['-s', '16M', file]);
  execFileSync('sfdisk', ['--quiet', '--label', label, file], { input: partitions.map((p) => `start=${p.start}, size=${p.sectors}, ${p.line}\n`).join('') });
  for (const [i, p] of partitions.entries()) {
    if (!p.files) continue;
    execFileSync('mkfs.vfat', ['--offset', String(p.start), '-n', `P${i}`, file, String((p.sectors * 512) / 1024)], { stdio: 'ignore' });
    const image = `${file}@@${p.start * 512}`;
    const dirs = new Set(
      Object.keys(p.files).flatMap((f) =>
        f
          .split('/')
          .slice(0, -1)
          .map((_, j, parts) => parts.slice(0, j + 1).join('/')),
      ),
    );
    for (const d of [...dirs].sort()) execFileSync('mmd', ['-i', image, `::/${d}`], { env });
    for (const [to, content] of Object.entries(p.files)) {
      const local = path.join(dir, `${name}.${i}.staged`);
      writeFileSync(local, content);
      execFileSync('mcopy', ['-i', image, local, `::/${to}`], { env });
    }
  }
  return file;
}

const readTarget = async (file: string) => {
  const target = await findKexecTarget(file, mkdtempSync(path.join(dir, 'work-')));
  return {
    kernel: readFileSync(target.kernel, 'utf8'),
    initrd: target.initrd ? readFileSync(target.initrd, 'utf8') : undefined,
    cmdline: target.cmdline,
    source: target.source,
  };
};

describe('the boot entry boot.kexec loads', () => {
  it('a Boot Loader Specification entry on a GPT EFI system partition: the default one, its initrds joined in order', async () => {
    const file = disk('bls.img', 'gpt', [
      {
        line: 'type=U',
        start: 2048,
        sectors: 8192,
        files: {
          'EFI/BOOT/BOOTX64.EFI': 'systemd-boot',
          'loader/loader.conf': 'default os-*.conf\ntimeout 0\n',
          'loader/entries/a-rescue.conf': 'title Rescue\nlinux /rescue\n',
          'loader/entries/os-6.1.conf': '# the OS\ntitle OS\nlinux /vmlinuz\ninitrd /microcode.img\ninitrd /initrd.img\noptions root=LABEL=os\noptions quiet\n',
          vmlinuz: 'the kernel',
          'microcode.img': 'ucode+',
          'initrd.img': 'initramfs',
        },
      },
      // The config drive after it has no boot entry.
      { line: 'type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7, name=cidata', start: 10240, sectors: 8192, files: { 'user-data': '#cloud-config\n' } },
    ]);
    expect(await readTarget(file)).toEqual({
      kernel: 'the kernel',
      initrd: 'ucode+initramfs',
      cmdline: 'root=LABEL=os quiet',
      source: 'partition 1, loader/entries/os-6.1.conf',
    });
  });

  it('without a default, the first entry by name; an entry without initrd loads none', async () => {
    const file = disk('bls-first.img', 'gpt', [
      {
        line: 'type=U',
        start: 2048,
        sectors: 8192,
        files: { 'loader/entries/b.conf': 'linux /b\n', 'loader/entries/a.conf': 'linux /a\noptions x=1\n', a: 'kernel a' },
      },
    ]);
    expect(await readTarget(file)).toEqual({ kernel: 'kernel a', initrd: undefined, cmdline: 'x=1', source: 'partition 1, loader/entries/a.conf' });
  });

  it("syslinux on an MBR partition: the DEFAULT label's kernel, its initrd from APPEND, paths relative to the configuration", async () => {
    const file = disk('syslinux.img', 'dos', [
      { line: 'type=83', start: 2048, sectors: 4096 },
      {
        line: 'type=c, bootable',
        start: 6144,
        sectors: 8192,
        files: {
          'syslinux/syslinux.cfg':
            'PROMPT 0\nDEFAULT os\nLABEL rescue\n  KERNEL /rescue\nLABEL os\n  LINUX ../vmlinuz\n  APPEND console=ttyS0 initrd=/initrd.img quiet\n',
          vmlinuz: 'the kernel',
          'initrd.img': 'initramfs',
        },
      },
    ]);
    expect(await readTarget(file)).toEqual({
      kernel: 'the kernel',
      initrd: 'initramfs',
      cmdline: 'console=ttyS0 quiet',
      source: 'partition 2, syslinux/syslinux.cfg',
    });
  });

  it('refuses a disk with no boot entry on a FAT partition, saying what to do instead', async () => {
    const empty = disk('no-entry.img', 'dos', [
      { line: 'type=83', start: 2048, sectors: 4096 },
      { line: 'type=c', start: 6144, sectors: 8192, files: { 'grub/grub.cfg': 'menuentry "os" {}\n' } },
    ]);
    await expect(findKexecTarget(empty, mkdtempSync(path.join(dir, 'work-')))).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'no-boot-entry' },
      message: expect.stringContaining('on its 1 FAT partition(s); boot the disk through the BMC instead'),
    });
  });
});
