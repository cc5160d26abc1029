// `npm run build:ramdisk`: the ramdisk a machine boots into, from Debian's packages and the
// project itself (scripts/lib/boot-image.mjs). Output in .ironflow/ramdisk/ (or
// IRONFLOW_DATA_DIR/ramdisk): vmlinuz (Debian's linux-image-amd64), initrd.img (busybox, Node,
// the ramdisk agent bundled with the Temporal core, the NIC and disk modules, an init that
// brings up the NIC whose MAC is if.mac over DHCP and runs the agent) and manifest.json
// (sha256, sizes, versions). Skipped when its inputs did not change.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
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

const { say } = reporter('build-ramdisk');
const outDir = path.resolve(process.env.IRONFLOW_DATA_DIR ?? path.join(repoRoot, '.ironflow'), 'ramdisk');

/** The NICs and disk controllers a ramdisk may meet; their dependencies come from modules.dep. */
const MODULES = [
  'virtio_pci',
  'virtio_net',
  'virtio_blk',
  'virtio_scsi',
  'e1000',
  'e1000e',
  'igb',
  'ixgbe',
  'ahci',
  'ata_piix',
  'sd_mod',
  'nvme',
  'sr_mod',
  'vfat',
  'nls_cp437',
  'nls_ascii',
  'nls_iso8859_1',
];

const GCONV_DIR = 'usr/lib/x86_64-linux-gnu/gconv';
const which = (tool) => execFileSync('sh', ['-c', `command -v ${tool} || true`], { encoding: 'utf8' }).trim();
/**
 * What deploy.image writes the config drive with (agent/ramdisk/config-drive-writer.ts),
 * disk.wipe erases devices with (agent/ramdisk/disk-erase.ts) and boot.kexec reads and boots
 * the installed OS with (agent/ramdisk/kexec.ts: mtools and debugfs read its boot entry with
 * no mount, kexec-tools loads it).
 */
const RAMDISK_TOOLS = [
  { source: which('nvme'), names: ['usr/sbin/nvme'] },
  { source: which('hdparm'), names: ['usr/sbin/hdparm'] },
  { source: which('kexec'), names: ['usr/sbin/kexec'] },
  { source: which('mkfs.fat'), names: ['usr/sbin/mkfs.fat', 'usr/sbin/mkfs.vfat'] },
  { source: which('mtools'), names: ['usr/bin/mtools', 'usr/bin/mcopy', 'usr/bin/mmd', 'usr/bin/mdir', 'usr/bin/mtype'] },
  { source: which('debugfs'), names: ['usr/sbin/debugfs'] },
  // mtools converts file names to the FAT code page (850) through glibc's iconv: without the
  // module mcopy fails "Error converting to codepage 850" and no config drive is written.
  { source: `/${GCONV_DIR}/IBM850.so`, names: [`${GCONV_DIR}/IBM850.so`] },
];

// On failure it says why on the console and powers off (the control plane's wait fails with the reason).
const INIT = `${INIT_PRELUDE}echo "ironflow ramdisk: $(uname -r)"
mac=$(sed -n 's/.*if\\.mac=\\([0-9a-fA-F:]*\\).*/\\1/p' /proc/cmdline | tr 'A-F' 'a-f')
iface=""
for dev in /sys/class/net/*; do [ "$(cat "$dev/address")" = "$mac" ] && iface=\${dev##*/}; done
if [ -z "$iface" ]; then
  echo "ironflow ramdisk: no NIC with MAC $mac (if.mac); NICs: $(cat /sys/class/net/*/address | tr '\\n' ' ')"
  sleep 10; poweroff -f
fi
ip link set "$iface" up
if ! udhcpc -i "$iface" -s /etc/udhcpc.script -q -n -t 10 -T 3; then
  echo "ironflow ramdisk: no DHCP answer on $iface"
  sleep 10; poweroff -f
fi
echo "ironflow ramdisk: $iface up, starting the agent"
NO_COLOR=1 /usr/bin/node /opt/ironflow/agent.cjs
echo "ironflow ramdisk: the agent exited ($?)"
sleep 10
poweroff -f
`;

async function main() {
  requireTools([
    ['cpio', 'cpio'],
    ['zstd', 'zstd'],
    ['ldd', 'libc-bin'],
    ['mkfs.fat', 'dosfstools'],
    ['mtools', 'mtools'],
    ['nvme', 'nvme-cli'],
    ['hdparm', 'hdparm'],
    ['kexec', 'kexec-tools'],
    ['debugfs', 'e2fsprogs'],
  ]);
  const kernel = newestKernel();
  const modules = moduleLoadOrder(kernel.version, MODULES);
  const stage = mkdtempSync(path.join(os.tmpdir(), 'ironflow-ramdisk-'));
  try {
    await bundleAgent('agent/ramdisk/image-entry.ts', path.join(stage, 'opt/ironflow'));
    const inputs = createHash('sha256');
    for (const file of [kernel.file, '/bin/busybox', process.execPath, path.join(stage, 'opt/ironflow/agent.cjs')]) inputs.update(sha256File(file));
    for (const tool of RAMDISK_TOOLS) inputs.update(sha256File(tool.source));
    // The cache naming glibc's iconv modules (the host's glibc is the ramdisk's).
    const gconvCache = { [`${GCONV_DIR}/gconv-modules.cache`]: readFileSync(`/${GCONV_DIR}/gconv-modules.cache`) };
    inputs.update(INIT).update(UDHCPC_SCRIPT).update(modules.join('\n'));
    const inputsDigest = inputs.digest('hex');
    const manifestFile = path.join(outDir, 'manifest.json');
    if (
      existsSync(manifestFile) &&
      JSON.parse(readFileSync(manifestFile, 'utf8')).inputsDigest === inputsDigest &&
      existsSync(path.join(outDir, 'initrd.img'))
    ) {
      say(`up to date: ${outDir}`);
      return;
    }
    say(`kernel ${kernel.version}, ${modules.length} modules, node ${process.version}`);
    stageInitramfs(stage, { kernel, modules, init: INIT, files: { 'etc/udhcpc.script': UDHCPC_SCRIPT, ...gconvCache }, binaries: RAMDISK_TOOLS });
    mkdirSync(outDir, { recursive: true });
    packInitramfs(stage, path.join(outDir, 'initrd.img'));
    copyFileSync(kernel.file, path.join(outDir, 'vmlinuz'));
    const manifest = {
      inputsDigest,
      builtAt: new Date().toISOString(),
      versions: { kernel: kernel.version, node: process.version, busybox: execFileSync('/bin/busybox', ['--help'], { encoding: 'utf8' }).split('\n')[0] },
      modules: modules.map((m) => path.basename(m)),
      files: Object.fromEntries(
        ['vmlinuz', 'initrd.img'].map((name) => [name, { sha256: sha256File(path.join(outDir, name)), sizeBytes: statSync(path.join(outDir, name)).size }]),
      ),
    };
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    say(
      `wrote ${outDir}: vmlinuz ${(manifest.files.vmlinuz.sizeBytes / 1e6).toFixed(1)} MB, initrd.img ${(manifest.files['initrd.img'].sizeBytes / 1e6).toFixed(1)} MB`,
    );
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

await main();
