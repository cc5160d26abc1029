// What the ramdisk (scripts/build-ramdisk.mjs) and the OS image (scripts/build-os-image.mjs)
// are built from: Debian's kernel and modules, busybox-static, the Node binary with its
// libraries, and an agent program bundled into one file with the Temporal core's native
// module, packed as a zstd cpio initramfs.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function reporter(name) {
  return {
    say: (message) => process.stderr.write(`${name}: ${message}\n`),
    fail: (message, fix) => {
      process.stderr.write(`${name}: FAILED: ${message}\n`);
      if (fix) process.stderr.write(`${name}: fix: ${fix}\n`);
      process.exit(1);
    },
  };
}

const { fail } = reporter('boot-image');

/** busybox applets the inits use (and an operator at the console may want). */
const APPLETS = [
  'sh',
  'mount',
  'umount',
  'mkdir',
  'cat',
  'echo',
  'sed',
  'grep',
  'ip',
  'udhcpc',
  'insmod',
  'poweroff',
  'reboot',
  'sleep',
  'ls',
  'dd',
  'blkdiscard',
  'sync',
  'tr',
  'head',
  'dmesg',
  'uname',
  'findfs',
  'blkid',
  'blockdev',
];

export function sha256File(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

export function requireTools(tools) {
  for (const [tool, pkg] of tools) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      fail(`${tool} is missing`, `apt-get install -y ${pkg}`);
    }
  }
  if (!existsSync('/bin/busybox') || execFileSync('sh', ['-c', 'ldd /bin/busybox 2>&1 || true'], { encoding: 'utf8' }).includes('=>'))
    fail('a static busybox is missing', 'apt-get install -y busybox-static');
}

export function newestKernel() {
  const kernels = existsSync('/boot')
    ? readdirSync('/boot')
        .filter((f) => /^vmlinuz-.*-amd64$/.test(f))
        .sort()
    : [];
  const file = kernels.at(-1);
  if (!file) fail('no Debian kernel in /boot', 'apt-get install -y linux-image-amd64');
  const version = file.slice('vmlinuz-'.length);
  if (!existsSync(`/lib/modules/${version}/modules.dep`)) fail(`no modules for ${version}`, 'apt-get install --reinstall -y linux-image-amd64');
  return { file: `/boot/${file}`, version };
}

/** The named modules with their dependencies, dependencies first, relative to /lib/modules/<version>. */
export function moduleLoadOrder(version, names) {
  const dep = new Map();
  for (const line of readFileSync(`/lib/modules/${version}/modules.dep`, 'utf8').split('\n')) {
    const [module, deps] = line.split(':');
    if (module) dep.set(module, (deps ?? '').trim().split(/\s+/).filter(Boolean));
  }
  const byName = new Map(
    [...dep.keys()].map((m) => [
      path
        .basename(m)
        .replace(/\.ko(\.(xz|zst|gz))?$/, '')
        .replace(/-/g, '_'),
      m,
    ]),
  );
  const order = [];
  const visit = (module) => {
    if (order.includes(module)) return;
    for (const d of dep.get(module) ?? []) visit(d);
    order.push(module);
  };
  // A name with no .ko is built into this kernel: as good as loaded.
  for (const name of names) if (byName.has(name)) visit(byName.get(name));
  return order;
}

export async function bundleAgent(entry, dir) {
  // Agents in an image run activity workers only and never bundle workflow code, so the
  // SDK's workflow bundler (webpack, swc) is left out: using it fails with this message.
  const noWorkflowBundler = {
    name: 'no-workflow-bundler',
    setup(build) {
      build.onResolve({ filter: /^\.\/workflow\/bundler$/ }, (args) =>
        args.importer.includes(`${path.sep}@temporalio${path.sep}worker${path.sep}`) ? { path: 'workflow-bundler', namespace: 'ironflow-image' } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'ironflow-image' }, () => ({
        contents: `const unavailable = () => { throw new Error('this image runs activity workers only: workflow bundling is not in it'); };
module.exports = { defaultWorkflowInterceptorModules: [], allowedBuiltinModules: [], disallowedBuiltinModules: [], disallowedModules: [], WorkflowCodeBundler: unavailable, bundleWorkflowCode: unavailable };`,
        loader: 'js',
      }));
    },
  };
  await esbuild.build({
    entryPoints: [path.join(repoRoot, entry)],
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

function sharedLibraries(binary) {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  return [...out.matchAll(/(\/[^\s]+) \(0x/g)].map((m) => m[1]);
}

/**
 * Lays out an initramfs in `stage`: busybox and its applets, the modules (and their load
 * order in /lib/modules/load-order), Node and other binaries with their libraries, the
 * bundled agent already in /opt/ironflow, the init and extra files.
 */
export function stageInitramfs(stage, { kernel, modules, init, files = {}, binaries = [] }) {
  for (const dir of ['bin', 'etc', 'proc', 'sys', 'dev', 'tmp', 'run', 'mnt', 'usr/bin', 'lib/modules']) mkdirSync(path.join(stage, dir), { recursive: true });
  copyFileSync('/bin/busybox', path.join(stage, 'bin/busybox'));
  for (const applet of APPLETS) symlinkSync('busybox', path.join(stage, 'bin', applet));
  writeFileSync(path.join(stage, 'init'), init, { mode: 0o755 });
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
    writeFileSync(path.join(stage, file), content, { mode: 0o755 });
  }
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
  // Other programs the agent runs ({ source, names }: the binary under each of its names).
  for (const { source, names } of binaries) {
    const [first, ...links] = names;
    mkdirSync(path.dirname(path.join(stage, first)), { recursive: true });
    copyFileSync(source, path.join(stage, first));
    chmodSync(path.join(stage, first), 0o755);
    for (const link of links) symlinkSync(path.basename(first), path.join(stage, link));
  }
  const native = path.join(stage, 'opt/ironflow/releases/x86_64-unknown-linux-gnu/index.node');
  for (const library of new Set([process.execPath, native, ...binaries.map((b) => b.source)].flatMap(sharedLibraries))) {
    const target = path.join(stage, library);
    mkdirSync(path.dirname(target), { recursive: true });
    copyFileSync(library, target);
  }
  // Strip what the agent never loads: debug sections of the Node binary and native module.
  try {
    execFileSync('strip', ['--strip-unneeded', path.join(stage, 'usr/bin/node'), native], { stdio: 'ignore' });
  } catch {
    process.stderr.write('boot-image: strip is missing (apt-get install -y binutils): the image is larger than it needs to be\n');
  }
}

export function packInitramfs(stage, file) {
  execFileSync(
    'sh',
    [
      '-c',
      `cd "${stage}" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | zstd -q -T0 -15 -f -o "${file}.tmp" && mv "${file}.tmp" "${file}"`,
    ],
    { stdio: 'inherit' },
  );
}

/** The shell lines of an init that mount the kernel's filesystems and load the staged modules. */
export const INIT_PRELUDE = `#!/bin/busybox sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /tmp /run /mnt
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in $(cat /lib/modules/load-order); do insmod "/lib/modules/$module" 2>/dev/null; done
ip link set lo up
`;

/** busybox udhcpc's hook: apply the lease to the interface. */
export const UDHCPC_SCRIPT = `#!/bin/sh
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
