// `npm run build:ramdisk`: the ramdisk a machine boots into, from Debian's packages and the
// project itself. Output in .ironflow/ramdisk/ (or IRONFLOW_DATA_DIR/ramdisk): vmlinuz (Debian's
// linux-image-amd64), initrd.img (zstd cpio: busybox-static, the Node binary and its
// libraries, the agent bundled into one file with the Temporal core's native module, the
// NIC and disk modules, an init) and manifest.json (sha256, sizes, versions). Skipped when
// its inputs did not change. The site agent serves the directory from /boot/files.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.resolve(process.env.IRONFLOW_DATA_DIR ?? path.join(repoRoot, '.ironflow'), 'ramdisk');
const say = (message) => process.stderr.write(`build-ramdisk: ${message}\n`);
const fail = (message, fix) => {
  say(`FAILED: ${message}`);
  if (fix) say(`fix: ${fix}`);
  process.exit(1);
};

/** The NICs and disk controllers a ramdisk may meet; their dependencies come from modules.dep. */
const MODULES = ['virtio_pci', 'virtio_net', 'virtio_blk', 'virtio_scsi', 'e1000', 'e1000e', 'igb', 'ixgbe', 'ahci', 'ata_piix', 'sd_mod', 'nvme', 'sr_mod'];
/** busybox applets init uses (and an operator at the console may want). */
const APPLETS = ['sh', 'mount', 'umount', 'mkdir', 'cat', 'echo', 'sed', 'grep', 'ip', 'udhcpc', 'insmod', 'poweroff', 'reboot', 'sleep', 'ls', 'dd', 'blkdiscard', 'sync', 'route', 'ifconfig', 'tr', 'head', 'dmesg', 'uname'];

function newestKernel() {
  const kernels = existsSync('/boot') ? readdirSync('/boot').filter((f) => /^vmlinuz-.*-amd64$/.test(f)).sort() : [];
  const file = kernels.at(-1);
  if (!file) fail('no Debian kernel in /boot', 'apt-get install -y linux-image-amd64');
  const version = file.slice('vmlinuz-'.length);
  if (!existsSync(`/lib/modules/${version}/modules.dep`)) fail(`no modules for ${version}`, 'apt-get install --reinstall -y linux-image-amd64');
  return { file: `/boot/${file}`, version };
}

/** The modules to load, dependencies first, as paths relative to /lib/modules/<version>. */
function moduleLoadOrder(version) {
  const dep = new Map();
  for (const line of readFileSync(`/lib/modules/${version}/modules.dep`, 'utf8').split('\n')) {
    const [module, deps] = line.split(':');
    if (module) dep.set(module, (deps ?? '').trim().split(/\s+/).filter(Boolean));
  }
  const byName = new Map([...dep.keys()].map((m) => [path.basename(m).replace(/\.ko(\.(xz|zst|gz))?$/, '').replace(/-/g, '_'), m]));
  const order = [];
  const visit = (module) => {
    if (order.includes(module)) return;
    for (const d of dep.get(module) ?? []) visit(d);
    order.push(module);
  };
  for (const name of MODULES) {
    const module = byName.get(name);
    // Built into this kernel (no .ko) is as good as loaded.
    if (module) visit(module);
  }
  return order;
}

function sharedLibraries(binary) {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  return [...out.matchAll(/(\/[^\s]+) \(0x/g)].map((m) => m[1]);
}

async function bundleAgent(dir) {
  // The ramdisk's worker runs activities only and never bundles workflow code, so the
  // SDK's workflow bundler (webpack, swc) is left out: using it fails with this message.
  const noWorkflowBundler = {
    name: 'no-workflow-bundler',
    setup(build) {
      build.onResolve({ filter: /^\.\/workflow\/bundler$/ }, (args) => (args.importer.includes(`${path.sep}@temporalio${path.sep}worker${path.sep}`) ? { path: 'workflow-bundler', namespace: 'ironflow-ramdisk' } : undefined));
      build.onLoad({ filter: /.*/, namespace: 'ironflow-ramdisk' }, () => ({
        contents: `const unavailable = () => { throw new Error('the ramdisk image runs activity workers only: workflow bundling is not in it'); };
module.exports = { defaultWorkflowInterceptorModules: [], allowedBuiltinModules: [], disallowedBuiltinModules: [], disallowedModules: [], WorkflowCodeBundler: unavailable, bundleWorkflowCode: unavailable };`,
        loader: 'js',
      }));
    },
  };
  await esbuild.build({
    entryPoints: [path.join(repoRoot, 'agent/ramdisk/image-entry.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: path.join(dir, 'agent.cjs'),
    plugins: [noWorkflowBundler],
    logLevel: 'error',
    legalComments: 'none',
  });
  // The core bridge finds its native module next to the bundle (releases/<target>/index.node).
  const native = path.join(repoRoot, 'node_modules/@temporalio/core-bridge/releases/x86_64-unknown-linux-gnu/index.node');
  if (!existsSync(native)) fail(`the Temporal core's native module is missing (${native})`, 'npm ci');
  mkdirSync(path.join(dir, 'releases/x86_64-unknown-linux-gnu'), { recursive: true });
  copyFileSync(native, path.join(dir, 'releases/x86_64-unknown-linux-gnu/index.node'));
}

const INIT = `#!/bin/busybox sh
# The ramdisk's init: mount the kernel's filesystems, load the NIC and disk modules, bring up
# the NIC whose MAC is if.mac over DHCP, and run the ramdisk agent. On failure it says why on
# the console and powers off (the control plane's wait fails with the reason).
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /tmp /run
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "ironflow ramdisk: $(uname -r), loading modules"
for module in $(cat /lib/modules/load-order); do insmod "/lib/modules/$module" 2>/dev/null; done
mac=$(sed -n 's/.*if\\.mac=\\([0-9a-fA-F:]*\\).*/\\1/p' /proc/cmdline | tr 'A-F' 'a-f')
iface=""
for dev in /sys/class/net/*; do [ "$(cat "$dev/address")" = "$mac" ] && iface=\${dev##*/}; done
ip link set lo up
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

const UDHCPC_SCRIPT = `#!/bin/sh
# busybox udhcpc's hook: apply the lease to the interface.
case "$1" in
  bound|renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/\${mask:-24}" dev "$interface"
    [ -n "$router" ] && ip route add default via "\${router%% *}" dev "$interface"
    : > /etc/resolv.conf
    for server in $dns; do echo "nameserver $server" >> /etc/resolv.conf; done
    ;;
esac
exit 0
`;

function sha256File(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

async function main() {
  for (const [tool, pkg] of [['cpio', 'cpio'], ['zstd', 'zstd'], ['ldd', 'libc-bin']]) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      fail(`${tool} is missing`, `apt-get install -y ${pkg}`);
    }
  }
  if (!existsSync('/bin/busybox') || execFileSync('sh', ['-c', 'ldd /bin/busybox 2>&1 || true'], { encoding: 'utf8' }).includes('=>')) fail('a static busybox is missing', 'apt-get install -y busybox-static');
  const kernel = newestKernel();
  const modules = moduleLoadOrder(kernel.version);
  const stage = mkdtempSync(path.join(os.tmpdir(), 'ironflow-ramdisk-'));
  try {
    await bundleAgent(path.join(stage, 'opt/ironflow'));
    const inputs = createHash('sha256');
    for (const file of [kernel.file, '/bin/busybox', process.execPath, path.join(stage, 'opt/ironflow/agent.cjs')]) inputs.update(sha256File(file));
    inputs.update(INIT).update(UDHCPC_SCRIPT).update(modules.join('\n'));
    const inputsDigest = inputs.digest('hex');
    const manifestFile = path.join(outDir, 'manifest.json');
    if (existsSync(manifestFile) && JSON.parse(readFileSync(manifestFile, 'utf8')).inputsDigest === inputsDigest && existsSync(path.join(outDir, 'initrd.img'))) {
      say(`up to date: ${outDir}`);
      return;
    }
    say(`kernel ${kernel.version}, ${modules.length} modules, node ${process.version}`);
    for (const dir of ['bin', 'etc', 'proc', 'sys', 'dev', 'tmp', 'run', 'usr/bin', `lib/modules`]) mkdirSync(path.join(stage, dir), { recursive: true });
    copyFileSync('/bin/busybox', path.join(stage, 'bin/busybox'));
    for (const applet of APPLETS) symlinkSync('busybox', path.join(stage, 'bin', applet));
    writeFileSync(path.join(stage, 'init'), INIT, { mode: 0o755 });
    writeFileSync(path.join(stage, 'etc/udhcpc.script'), UDHCPC_SCRIPT, { mode: 0o755 });
    for (const module of modules) {
      const source = `/lib/modules/${kernel.version}/${module}`;
      const target = path.join(stage, 'lib/modules', module.replace(/\.(xz|zst|gz)$/, ''));
      mkdirSync(path.dirname(target), { recursive: true });
      // busybox insmod takes plain .ko files.
      if (module.endsWith('.xz')) writeFileSync(target, execFileSync('xz', ['-dc', source], { maxBuffer: 1 << 28 }));
      else if (module.endsWith('.zst')) writeFileSync(target, execFileSync('zstd', ['-dc', source], { maxBuffer: 1 << 28 }));
      else copyFileSync(source, target);
    }
    writeFileSync(path.join(stage, 'lib/modules/load-order'), `${modules.map((m) => m.replace(/\.(xz|zst|gz)$/, '')).join('\n')}\n`);
    copyFileSync(process.execPath, path.join(stage, 'usr/bin/node'));
    chmodSync(path.join(stage, 'usr/bin/node'), 0o755);
    const native = path.join(stage, 'opt/ironflow/releases/x86_64-unknown-linux-gnu/index.node');
    for (const library of new Set([...sharedLibraries(process.execPath), ...sharedLibraries(native)])) {
      const target = path.join(stage, library);
      mkdirSync(path.dirname(target), { recursive: true });
      copyFileSync(library, target);
    }
    // Strip what the agent never loads: debug sections of the Node binary and native module.
    try {
      execFileSync('strip', ['--strip-unneeded', path.join(stage, 'usr/bin/node'), native], { stdio: 'ignore' });
    } catch {
      say('strip is missing (apt-get install -y binutils): the image is larger than it needs to be');
    }
    mkdirSync(outDir, { recursive: true });
    const initrd = path.join(outDir, 'initrd.img');
    execFileSync('sh', ['-c', `cd "${stage}" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | zstd -q -T0 -15 -f -o "${initrd}.tmp" && mv "${initrd}.tmp" "${initrd}"`], { stdio: 'inherit' });
    copyFileSync(kernel.file, path.join(outDir, 'vmlinuz'));
    const manifest = {
      inputsDigest,
      builtAt: new Date().toISOString(),
      versions: { kernel: kernel.version, node: process.version, busybox: execFileSync('/bin/busybox', ['--help'], { encoding: 'utf8' }).split('\n')[0] },
      modules: modules.map((m) => path.basename(m)),
      files: Object.fromEntries(['vmlinuz', 'initrd.img'].map((name) => [name, { sha256: sha256File(path.join(outDir, name)), sizeBytes: statSync(path.join(outDir, name)).size }])),
    };
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    say(`wrote ${outDir}: vmlinuz ${(manifest.files.vmlinuz.sizeBytes / 1e6).toFixed(1)} MB, initrd.img ${(manifest.files['initrd.img'].sizeBytes / 1e6).toFixed(1)} MB`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

await main();
