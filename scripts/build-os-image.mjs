// `npm run build:os-image`: a small bootable raw disk image for deploy tests and the demo — an
// "installed OS" whose only job is to join back as its node. BIOS boot: an MBR from syslinux
// and one FAT partition (label IFOS) holding syslinux, Debian's kernel and an initramfs
// (scripts/lib/boot-image.mjs) whose init brings up the network, mounts the config drive the
// ramdisk wrote (cidata or config-2) and the IFOS partition (the agent's data dir, so a
// reboot keeps the identity), and runs the node agent (agent/node/os-image-entry.ts).
// Output: .ironflow/os-image/{os.img,manifest.json}. Built without root (mtools, syslinux).
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
const IMAGE_MIB = PARTITION_START_MIB + PARTITION_MIB;
const MBR_CODE = '/usr/lib/syslinux/mbr/mbr.bin';

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
if ! mount -o ro "$drive" /run/config-drive || ! mount -o fmask=0177,dmask=0077 "$(findfs LABEL=IFOS)" /mnt/os; then
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
  APPEND console=tty0 console=ttyS0 quiet
`;

function mtools(args, env) {
  execFileSync(args[0], args.slice(1), { env: { ...process.env, MTOOLS_SKIP_CHECK: '1', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
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
  const kernel = newestKernel();
  const modules = moduleLoadOrder(kernel.version, MODULES);
  const stage = mkdtempSync(path.join(os.tmpdir(), 'ironflow-os-'));
  try {
    await bundleAgent('agent/node/os-image-entry.ts', path.join(stage, 'root/opt/ironflow'));
    const inputs = createHash('sha256');
    for (const file of [kernel.file, '/bin/busybox', process.execPath, path.join(stage, 'root/opt/ironflow/agent.cjs')]) inputs.update(sha256File(file));
    inputs.update(INIT).update(SYSLINUX_CFG).update(UDHCPC_SCRIPT).update(modules.join('\n'));
    const inputsDigest = inputs.digest('hex');
    const manifestFile = path.join(outDir, 'manifest.json');
    const image = path.join(outDir, 'os.img');
    if (existsSync(manifestFile) && JSON.parse(readFileSync(manifestFile, 'utf8')).inputsDigest === inputsDigest && existsSync(image)) {
      say(`up to date: ${outDir}`);
      return;
    }
    stageInitramfs(path.join(stage, 'root'), { kernel, modules, init: INIT, files: { 'etc/udhcpc.script': UDHCPC_SCRIPT } });
    packInitramfs(path.join(stage, 'root'), path.join(stage, 'initrd.img'));
    writeFileSync(path.join(stage, 'syslinux.cfg'), SYSLINUX_CFG);

    // The FAT partition, filled and made bootable through mtools (no mount, no root).
    const partition = path.join(stage, 'partition.img');
    execFileSync('mkfs.vfat', ['-n', 'IFOS', '-C', partition, String(PARTITION_MIB * 1024)], { stdio: 'ignore' });
    mtools(['mcopy', '-i', partition, kernel.file, '::/vmlinuz']);
    mtools(['mcopy', '-i', partition, path.join(stage, 'initrd.img'), '::/initrd.img']);
    mtools(['mcopy', '-i', partition, path.join(stage, 'syslinux.cfg'), '::/syslinux.cfg']);
    execFileSync('syslinux', ['--install', partition], { stdio: 'inherit' });

    // The disk: syslinux's MBR code, one active FAT partition at 1 MiB.
    mkdirSync(outDir, { recursive: true });
    const temp = `${image}.tmp`;
    writeFileSync(temp, Buffer.alloc(0));
    execFileSync('truncate', ['-s', `${IMAGE_MIB}M`, temp]);
    execFileSync('sfdisk', ['--quiet', '--label', 'dos', temp], {
      input: `start=${PARTITION_START_MIB * 2048}, size=${PARTITION_MIB * 2048}, type=c, bootable\n`,
    });
    const mbr = openSync(temp, 'r+');
    writeSync(mbr, readFileSync(MBR_CODE).subarray(0, 440), 0, 440, 0);
    closeSync(mbr);
    writeAt(temp, partition, PARTITION_START_MIB * MIB);
    execFileSync('mv', [temp, image]);
    const manifest = {
      inputsDigest,
      builtAt: new Date().toISOString(),
      versions: { kernel: kernel.version, node: process.version },
      format: 'raw',
      compression: 'none',
      files: { 'os.img': { sha256: sha256File(image), sizeBytes: statSync(image).size } },
    };
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    say(`wrote ${image}: ${(manifest.files['os.img'].sizeBytes / MIB).toFixed(0)} MiB, sha256 ${manifest.files['os.img'].sha256}`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

await main();
