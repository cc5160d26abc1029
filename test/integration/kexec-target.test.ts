// What boot.kexec loads on a real machine (agent/ramdisk/kexec.ts): the installed OS's kernel,
// initrds and command line, read from its boot loader's configuration on the disk's FAT
// partitions through mtools and its ext4 ones through debugfs, as the ramdisk reads a deployed
// disk. The disks here are image files partitioned by sfdisk and filled by mkfs.vfat and
// mtools, or by mkfs.ext4 from a directory; that kexec then boots what it loaded is
// test/e2e/qemu-lifecycle.test.ts (a QEMU machine kexecs into the UEFI image).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
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
  ['mkfs.ext4', 'e2fsprogs'],
  ['debugfs', 'e2fsprogs'],
]);

/** A file's content, or a symbolic link to another path (ext4 only). */
type Content = string | { link: string };
interface Partition {
  line: string;
  start: number;
  sectors: number;
  /** ext4 partitions are made from these files; FAT (the default) ones are formatted and filled. */
  fs?: 'ext4';
  files?: Record<string, Content>;
}

function fillFat(file: string, name: string, i: number, p: Partition & { files: Record<string, Content> }) {
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
    writeFileSync(local, content as string);
    execFileSync('mcopy', ['-i', image, local, `::/${to}`], { env });
  }
}

function fillExt4(file: string, name: string, i: number, p: Partition & { files: Record<string, Content> }) {
  const root = path.join(dir, `${name}.${i}.root`);
  for (const [to, content] of Object.entries(p.files)) {
    mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
    if (typeof content === 'string') writeFileSync(path.join(root, to), content);
    else symlinkSync(content.link, path.join(root, to));
  }
  execFileSync('mkfs.ext4', ['-q', '-F', '-E', `offset=${p.start * 512}`, '-d', root, file, `${(p.sectors * 512) / 1024}k`], { stdio: 'ignore' });
}

/** A 16 MiB disk partitioned by sfdisk; each partition given files is formatted and filled (path in the partition → content). */
function disk(name: string, label: 'dos' | 'gpt', partitions: Partition[]): string {
  const file = path.join(dir, name);
  execFileSync('truncate', ['-s', '16M', file]);
  execFileSync('sfdisk', ['--quiet', '--label', label, file], { input: partitions.map((p) => `start=${p.start}, size=${p.sectors}, ${p.line}\n`).join('') });
  for (const [i, p] of partitions.entries()) {
    if (!p.files) continue;
    const filled = p as Partition & { files: Record<string, Content> };
    if (p.fs === 'ext4') fillExt4(file, name, i, filled);
    else fillFat(file, name, i, filled);
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
      source: 'partition 1, "loader/entries/os-6.1.conf"',
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
    expect(await readTarget(file)).toEqual({ kernel: 'kernel a', initrd: undefined, cmdline: 'x=1', source: 'partition 1, "loader/entries/a.conf"' });
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
      source: 'partition 2, "syslinux/syslinux.cfg"',
    });
  });

  it("GRUB on an ext4 root, as Ubuntu's cloud images: the default menu entry's linux and initrd, variables left out", async () => {
    const grubCfg = [
      '# DO NOT EDIT THIS FILE',
      'if [ -s $prefix/grubenv ]; then',
      '  load_env',
      'fi',
      'set default="0"',
      'function recordfail {',
      '  set recordfail=1',
      '}',
      "menuentry 'Ubuntu' --class ubuntu --class gnu-linux $menuentry_id_option 'gnulinux-simple-x' {",
      '\trecordfail',
      '\tif [ "${initrdfail}" = 1 ]; then',
      '\t  echo "initrd failed before"',
      '\tfi',
      '\tsearch --no-floppy --fs-uuid --set=root 6a5b',
      '\tlinux\t/boot/vmlinuz-6.8.0-49-generic root=LABEL=cloudimg-rootfs ro $vt_handoff console=ttyS0',
      '\tinitrd\t/boot/initrd.img-6.8.0-49-generic',
      '}',
      "submenu 'Advanced options for Ubuntu' $menuentry_id_option 'gnulinux-advanced-x' {",
      "\tmenuentry 'Ubuntu, with Linux 6.8.0-49-generic (recovery mode)' {",
      '\t\tlinux\t/boot/vmlinuz-6.8.0-49-generic root=LABEL=cloudimg-rootfs ro single',
      '\t}',
      '}',
    ].join('\n');
    const file = disk('grub-ext4.img', 'gpt', [
      {
        line: 'type=L',
        start: 2048,
        sectors: 16384,
        fs: 'ext4',
        files: {
          'boot/grub/grub.cfg': grubCfg,
          'boot/vmlinuz-6.8.0-49-generic': 'the kernel',
          'boot/initrd.img-6.8.0-49-generic': 'initramfs',
          'etc/hostname': 'ubuntu',
        },
      },
      // The EFI system partition's grub.cfg only hands over to the root's: it has no menu entry.
      {
        line: 'type=U',
        start: 18432,
        sectors: 8192,
        files: { 'EFI/ubuntu/grub.cfg': "search.fs_uuid 6a5b root\nset prefix=($root)'/boot/grub'\nconfigfile $prefix/grub.cfg\n" },
      },
    ]);
    expect(await readTarget(file)).toEqual({
      kernel: 'the kernel',
      initrd: 'initramfs',
      cmdline: 'root=LABEL=cloudimg-rootfs ro console=ttyS0',
      source: 'partition 1, "boot/grub/grub.cfg"',
    });
  });

  it("GRUB's `set default` by title on a separate ext4 /boot, the kernel through a symbolic link and a device prefix", async () => {
    const file = disk('grub-title.img', 'dos', [
      {
        line: 'type=83',
        start: 2048,
        sectors: 8192,
        fs: 'ext4',
        files: {
          'grub/grub.cfg':
            "set default='Debian, older'\nmenuentry 'Debian' {\n  linux /vmlinuz root=/dev/sda2\n}\nmenuentry 'Debian, older' {\n  linux (hd0,msdos1)/vmlinuz.old root=/dev/sda2 quiet\n  initrd /initrd.img.old /extra.img\n}\n",
          'vmlinuz-6.1.0-old': 'old kernel',
          'vmlinuz.old': { link: 'vmlinuz-6.1.0-old' },
          'initrd.img.old': 'old initramfs+',
          'extra.img': 'extra',
        },
      },
      { line: 'type=83', start: 10240, sectors: 8192, fs: 'ext4', files: { 'etc/hostname': 'debian' } },
    ]);
    expect(await readTarget(file)).toEqual({
      kernel: 'old kernel',
      initrd: 'old initramfs+extra',
      cmdline: 'root=/dev/sda2 quiet',
      source: 'partition 1, "grub/grub.cfg"',
    });
  });

  it('a Boot Loader Specification entry under /boot on an ext4 root, naming its files from /boot as Fedora does', async () => {
    const file = disk('bls-ext4.img', 'gpt', [
      {
        line: 'type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
        start: 2048,
        sectors: 16384,
        fs: 'ext4',
        files: {
          'boot/loader/entries/f41-6.11.conf': 'title Fedora\nversion 6.11\nlinux /vmlinuz-6.11\ninitrd /initramfs-6.11.img\noptions root=UUID=1234 ro\n',
          'boot/vmlinuz-6.11': 'the kernel',
          'boot/initramfs-6.11.img': 'initramfs',
        },
      },
    ]);
    expect(await readTarget(file)).toEqual({
      kernel: 'the kernel',
      initrd: 'initramfs',
      cmdline: 'root=UUID=1234 ro',
      source: 'partition 1, "boot/loader/entries/f41-6.11.conf"',
    });
  });

  it("refuses a boot entry whose files are larger than what it copies into the ramdisk's memory, and one naming a file the disk lacks", async () => {
    const file = disk('large.img', 'gpt', [
      {
        line: 'type=L',
        start: 2048,
        sectors: 16384,
        fs: 'ext4',
        files: {
          'boot/grub/grub.cfg': "menuentry 'os' {\n linux /boot/vmlinuz\n initrd /boot/initrd.img\n}\n",
          'boot/vmlinuz': 'k'.repeat(600),
          'boot/initrd.img': 'i'.repeat(600),
        },
      },
    ]);
    await expect(findKexecTarget(file, mkdtempSync(path.join(dir, 'work-')), 1000)).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'boot-files-too-large' },
      message: expect.stringContaining('"/boot/initrd.img" on partition 1 is larger than the 400 bytes boot.kexec had left'),
    });
    const many = disk('many-initrds.img', 'gpt', [
      {
        line: 'type=L',
        start: 2048,
        sectors: 16384,
        fs: 'ext4',
        files: {
          'boot/grub/grub.cfg': `menuentry 'os' {\n linux /boot/vmlinuz\n initrd ${Array.from({ length: 17 }, (_, i) => `/i${i}`).join(' ')}\n}\n`,
          'boot/vmlinuz': 'k',
        },
      },
    ]);
    await expect(findKexecTarget(many, mkdtempSync(path.join(dir, 'work-')))).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining('the boot entry in "boot/grub/grub.cfg" on partition 1 names 17 initrds'),
      details: { reason: 'too-many-initrds' },
    });
    const lacking = disk('lacking.img', 'gpt', [
      { line: 'type=L', start: 2048, sectors: 16384, fs: 'ext4', files: { 'boot/grub/grub.cfg': "menuentry 'os' {\n linux /boot/vmlinuz-gone\n}\n" } },
    ]);
    await expect(findKexecTarget(lacking, mkdtempSync(path.join(dir, 'work-')))).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'boot-file-missing' },
      message: 'the boot entry names "/boot/vmlinuz-gone", which ext partition 1 does not hold',
    });
  });

  it('refuses a disk with no boot entry on a FAT or ext partition, saying what to do instead', async () => {
    const empty = disk('no-entry.img', 'dos', [
      { line: 'type=83', start: 2048, sectors: 4096 },
      { line: 'type=c', start: 6144, sectors: 8192, files: { 'grub/grub.cfg': 'menuentry "os" {}\n' } },
    ]);
    await expect(findKexecTarget(empty, mkdtempSync(path.join(dir, 'work-')))).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'no-boot-entry' },
      message: expect.stringContaining('on its 1 FAT or ext partition(s); boot the disk through the BMC instead'),
    });
  });
});
