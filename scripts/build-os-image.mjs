// `npm run build:os-image`: small bootable raw disk images for deploy tests and the demo — an
// "installed OS" whose only job is to join back as its node. One FAT partition (label IFOS)
// holds Debian's kernel and an initramfs (scripts/lib/boot-image.mjs) whose init brings up the
// network, mounts the config drive the ramdisk wrote (cidata or config-2) and the IFOS
// partition (the agent's data dir, so a reboot keeps the identity; `dirsync`, as on FAT a
// rename may not reach the disk otherwise, and a power cut must not take the identity), and
// runs the node agent (agent/node/os-image-entry.ts). Two images of it:
// - os.img, BIOS: an MBR with syslinux's boot code, the partition active, syslinux in it;
// - os-uefi.img, UEFI: a GPT whose partition is the EFI system partition, with systemd-boot at
//   the removable-media path (EFI/BOOT/BOOTX64.EFI) and one loader entry, as cloud images are.
// Output: .ironflow/os-image/{os.img,os-uefi.img,manifest.json}. Built without root (mtools,
// syslinux, sfdisk).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  INIT_PRELUDE,
  UDHCPC_SCRIPT,
  bundleAgent,
  moduleLoadOrder,
  newestKernel,
  packInitramfs,
  repoRoot,
  reporter,
  requireTools,
  sha256File,
  stageInitramfs,
} from './lib/boot-image.mjs';

const { say } = reporter('build-os-image');
const outDir = path.resolve(process.env.IRONFLOW_DATA_DIR ?? path.join(repoRoot, '.ironflow'), 'os-image');
const MIB = 1024 * 1024;
const PARTITION_START_MIB = 1;
const PARTITION_MIB = 72;
/** A GPT keeps a backup of its table in the disk's last 33 sectors: the UEFI image ends 1 MiB after its partition. */
const GPT_TAIL_MIB = 1;
const MBR_CODE = '/usr/lib/syslinux/mbr/mbr.bin';
const SYSTEMD_BOOT = '/usr/lib/systemd/boot/efi/systemd-bootx64.efi';
const KERNEL_OPTIONS = 'console=tty0 console=ttyS0 quiet';

const MODULES = [
  'virtio_pci',
  'virtio_net',
  'virtio_blk',
  'virtio_scsi',
  'e1000',
  'e1000e',
  'ahci',
  'ata_piix',
  'sd_mod',
  'nvme',
  'vfat',
  'nls_cp437',
  'nls_ascii',
  'nls_iso8859_1',
  'isofs',
];

const INIT = `${INIT_PRELUDE}echo "ironflow os: $(uname -r) booted from disk"
for dev in /sys/class/net/*; do
  iface=\${dev##*/}
  [ "$iface" = lo ] && continue
  ip link set "$iface" up
  udhcpc -i "$iface" -s /etc/udhcpc.script -q -n -t 5 -T 2 && break
done
sleep 1
drive=$(findfs LABEL=cidata 2>/dev/null || findfs LABEL=CIDATA 2>/dev/null || findfs LABEL=config-2 2>/dev/null)
if [ -z "$drive" ]; then
  echo "ironflow os: no config drive (cidata or config-2): not deployed by Ironflow"
  sleep 10; poweroff -f
fi
mkdir -p /run/config-drive /mnt/os
if ! mount -o ro "$drive" /run/config-drive || ! mount -o dirsync,fmask=0177,dmask=0077 "$(findfs LABEL=IFOS)" /mnt/os; then
  echo "ironflow os: cannot mount the config drive $drive or the IFOS partition"
  sleep 10; poweroff -f
fi
echo "ironflow os: config drive $drive, starting the node agent"
NO_COLOR=1 /usr/bin/node /opt/ironflow/agent.cjs /run/config-drive /mnt/os/ironflow
echo "ironflow os: the node agent exited ($?)"
sleep 10
poweroff -f
`;

const SYSLINUX_CFG = `DEFAULT ironflow
PROMPT 0
TIMEOUT 0
LABEL ironflow
  KERNEL /vmlinuz
  INITRD /initrd.img
  APPEND ${KERNEL_OPTIONS}
`;

const LOADER_CONF = `default ironflow.conf
timeout 0
`;

const LOADER_ENTRY = `title Ironflow OS
linux /vmlinuz
initrd /initrd.img
options ${KERNEL_OPTIONS}
`;

function mtools(args, env) {
  execFileSync(args[0], args.slice(1), { env: { ...process.env, MTOOLS_SKIP_CHECK: '1', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A FAT partition image (label IFOS) at `file` holding each [source, path in the partition], filled through mtools. */
function fatPartition(file, files) {
  execFileSync('mkfs.vfat', ['-n', 'IFOS', '-C', file, String(PARTITION_MIB * 1024)], { stdio: 'ignore' });
  const dirs = new Set(
    files.flatMap(([, to]) =>
      to
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  for (const dir of [...dirs].sort()) mtools(['mmd', '-i', file, `::/${dir}`]);
  for (const [from, to] of files) mtools(['mcopy', '-i', file, from, `::/${to}`]);
  return file;
}

/** The disk image at `image`: a `label` partition table whose one partition (at 1 MiB) is `partition`, with MBR boot code when given. */
function writeDisk(image, partition, { label, imageMib, partition: fields, bootCode }) {
  const temp = `${image}.tmp`;
  writeFileSync(temp, Buffer.alloc(0));
  execFileSync('truncate', ['-s', `${imageMib}M`, temp]);
  execFileSync('sfdisk', ['--quiet', '--label', label, temp], {
    input: `start=${PARTITION_START_MIB * 2048}, size=${PARTITION_MIB * 2048}, ${fields}\n`,
  });
  if (bootCode) {
    const mbr = openSync(temp, 'r+');
    writeSync(mbr, bootCode, 0, bootCode.length, 0);
    closeSync(mbr);
  }
  writeAt(temp, partition, PARTITION_START_MIB * MIB);
  execFileSync('mv', [temp, image]);
}

/** Copies `file` into the image at `offset` bytes. */
function writeAt(image, file, offset) {
  const out = openSync(image, 'r+');
  const input = openSync(file, 'r');
  const buffer = Buffer.alloc(4 * MIB);
  try {
    for (let at = 0; ;) {
      const n = readSync(input, buffer, 0, buffer.length, at);
      if (n === 0) break;
      writeSync(out, buffer, 0, n, offset + at);
      at += n;
    }
  } finally {
    closeSync(out);
    closeSync(input);
  }
}

async function main() {
  requireTools([
    ['cpio', 'cpio'],
    ['zstd', 'zstd'],
    ['ldd', 'libc-bin'],
    ['syslinux', 'syslinux'],
    ['mcopy', 'mtools'],
    ['mkfs.vfat', 'dosfstools'],
    ['sfdisk', 'fdisk'],
  ]);
  if (!existsSync(MBR_CODE)) reporter('build-os-image').fail(`${MBR_CODE} is missing`, 'apt-get install -y syslinux-common');
  if (!existsSync(SYSTEMD_BOOT)) reporter('build-os-image').fail(`${SYSTEMD_BOOT} is missing`, 'apt-get install -y systemd-boot-efi');
  const kernel = newestKernel();
  const modules = moduleLoadOrder(kernel.version, MODULES);
  const stage = mkdtempSync(path.join(os.tmpdir(), 'ironflow-os-'));
  try {
    await bundleAgent('agent/node/os-image-entry.ts', path.join(stage, 'root/opt/ironflow'));
    const inputs = createHash('sha256');
    for (const file of [kernel.file, '/bin/busybox', process.execPath, SYSTEMD_BOOT, path.join(stage, 'root/opt/ironflow/agent.cjs')])
      inputs.update(sha256File(file));
    inputs.update(INIT).update(SYSLINUX_CFG).update(LOADER_CONF).update(LOADER_ENTRY).update(UDHCPC_SCRIPT).update(modules.join('\n'));
    const inputsDigest = inputs.digest('hex');
    const manifestFile = path.join(outDir, 'manifest.json');
    const images = ['os.img', 'os-uefi.img'];
    if (
      existsSync(manifestFile) &&
      JSON.parse(readFileSync(manifestFile, 'utf8')).inputsDigest === inputsDigest &&
      images.every((name) => existsSync(path.join(outDir, name)))
    ) {
      say(`up to date: ${outDir}`);
      return;
    }
    stageInitramfs(path.join(stage, 'root'), { kernel, modules, init: INIT, files: { 'etc/udhcpc.script': UDHCPC_SCRIPT } });
    packInitramfs(path.join(stage, 'root'), path.join(stage, 'initrd.img'));
    writeFileSync(path.join(stage, 'syslinux.cfg'), SYSLINUX_CFG);
    writeFileSync(path.join(stage, 'loader.conf'), LOADER_CONF);
    writeFileSync(path.join(stage, 'ironflow.conf'), LOADER_ENTRY);
    const bootFiles = [
      [kernel.file, 'vmlinuz'],
      [path.join(stage, 'initrd.img'), 'initrd.img'],
    ];
    mkdirSync(outDir, { recursive: true });

    // BIOS: syslinux in the partition (through mtools: no mount, no root), its MBR code, the partition active.
    const biosPartition = fatPartition(path.join(stage, 'bios.part'), [...bootFiles, [path.join(stage, 'syslinux.cfg'), 'syslinux.cfg']]);
    execFileSync('syslinux', ['--install', biosPartition], { stdio: 'inherit' });
    writeDisk(path.join(outDir, 'os.img'), biosPartition, {
      label: 'dos',
      imageMib: PARTITION_START_MIB + PARTITION_MIB,
      partition: 'type=c, bootable',
      bootCode: readFileSync(MBR_CODE).subarray(0, 440),
    });

    // UEFI: the partition is the EFI system partition, systemd-boot where firmware looks on removable media.
    const espPartition = fatPartition(path.join(stage, 'esp.part'), [
      ...bootFiles,
      [SYSTEMD_BOOT, 'EFI/BOOT/BOOTX64.EFI'],
      [path.join(stage, 'loader.conf'), 'loader/loader.conf'],
      [path.join(stage, 'ironflow.conf'), 'loader/entries/ironflow.conf'],
    ]);
    writeDisk(path.join(outDir, 'os-uefi.img'), espPartition, {
      label: 'gpt',
      imageMib: PARTITION_START_MIB + PARTITION_MIB + GPT_TAIL_MIB,
      partition: 'type=U, name=IFOS',
    });

    const manifest = {
      inputsDigest,
      builtAt: new Date().toISOString(),
      versions: { kernel: kernel.version, node: process.version },
      format: 'raw',
      compression: 'none',
      files: Object.fromEntries(
        images.map((name) => [name, { sha256: sha256File(path.join(outDir, name)), sizeBytes: statSync(path.join(outDir, name)).size }]),
      ),
    };
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    for (const name of images)
      say(`wrote ${path.join(outDir, name)}: ${(manifest.files[name].sizeBytes / MIB).toFixed(0)} MiB, sha256 ${manifest.files[name].sha256}`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

await main();
