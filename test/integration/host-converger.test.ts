// The node agent's host converger on a root directory (the emulator's installed OS is one):
// the real converger writes the units' files, sysctl drop-ins and systemd unit files under
// the root, a second pass changes nothing and says so, a file changed by hand is reported
// drifted and set back (also after an agent restart), packages without a package manager are
// unsupported, a systemd unit where systemd does not run the root is pending (never
// converged). Node facts come from a sysfs tree and the host's nvidia-smi (the emulated
// machine's OS root carries both), and gpu.reset runs that nvidia-smi or is UNSUPPORTED.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { gpuResetLog, layOutEmulatedOsRoot } from '../../agent/emulator/installed-os';
import { Machine, type MachineDescription } from '../../agent/emulator/machine';
import { applyAction } from '../../agent/node/host-actions';
import { HostConverger, type HostState } from '../../agent/node/host-converger';
import { HostRoot } from '../../agent/node/host-root';
import { readHostMachine } from '../../agent/node/machine';
import { resetGpus } from '../../agent/node/nvidia-smi';
import { AgentLog } from '../../agent/common/log';
import { isIronflowError } from '../../core/errors';

const temp = (prefix: string) => mkdtempSync(path.join(inject('runDir'), prefix));
const quiet = () => new AgentLog(() => undefined);

const spec = {
  workflowId: 'node:node_x:deploying:4',
  profile: 'gpu-host@1',
  units: [
    { name: 'hugepages', source: 'pool', known: true, settings: { size: '2M', count: 512, perNumaNode: false } },
    {
      name: 'kernel-modules',
      source: 'profile',
      known: true,
      settings: { load: ['vfio_pci'], blacklist: ['nouveau'], options: { vfio_pci: 'ids=10de:2330' } },
    },
    { name: 'cpu', source: 'profile', known: true, settings: { governor: 'performance' } },
    { name: 'iommu', source: 'profile', known: true, settings: { mode: 'passthrough' } },
    { name: 'kubernetes', source: 'pool', known: true, settings: { role: 'worker', labels: { gpu: 'h100' }, taints: [] } },
    { name: 'gpu-sharing', source: 'pool', known: true, settings: { strategy: 'timeslice', replicas: 4 } },
    { name: 'nvidia-driver', source: 'profile', known: false, settings: { branch: '580' } },
  ],
  skipped: [],
};

const byName = (state: HostState | undefined) => Object.fromEntries((state?.units ?? []).map((u) => [u.name, u]));

describe('the host converger on a root directory', () => {
  const dataDir = temp('host-data-');
  const root = new HostRoot(temp('host-root-'));
  const file = (hostPath: string) => root.path(hostPath);
  const converger = new HostConverger(dataDir, root, quiet());

  it('applies each unit under the root: files, sysctl drop-in, systemd unit file; packages unsupported, systemd pending, unknown failed', async () => {
    const state = await converger.converge(spec);
    const units = byName(state);
    expect(state?.units.map((u) => `${u.name}:${u.state}`)).toEqual([
      'hugepages:converged',
      'kernel-modules:converged',
      'cpu:pending',
      'iommu:converged',
      'kubernetes:unsupported',
      'gpu-sharing:converged',
      'nvidia-driver:failed',
    ]);
    expect(state?.changed).toBe(true);
    expect(readFileSync(file('/etc/sysctl.d/90-ironflow-hugepages.conf'), 'utf8')).toMatch(/^vm\.nr_hugepages = 512$/m);
    expect(readFileSync(file('/etc/modules-load.d/90-ironflow.conf'), 'utf8')).toMatch(/^vfio_pci$/m);
    expect(readFileSync(file('/etc/modprobe.d/90-ironflow.conf'), 'utf8')).toMatch(/^blacklist nouveau\noptions vfio_pci ids=10de:2330$/m);
    expect(statSync(file('/etc/modprobe.d/90-ironflow.conf')).mode & 0o7777).toBe(0o644);
    expect(readFileSync(file('/etc/default/grub.d/90-ironflow-iommu.cfg'), 'utf8')).toContain('intel_iommu=on amd_iommu=on iommu=pt');
    expect(units.iommu).toMatchObject({ rebootRequired: true, changed: true });
    // systemd does not run this root: the unit file and its wants link are there, the unit is not claimed converged.
    expect(readFileSync(file('/etc/systemd/system/ironflow-cpu-governor.service'), 'utf8')).toContain('echo performance');
    expect(readlinkSync(file('/etc/systemd/system/multi-user.target.wants/ironflow-cpu-governor.service'))).toBe(
      '/etc/systemd/system/ironflow-cpu-governor.service',
    );
    expect(units.cpu?.reason).toMatch(/systemd is not PID 1 in .*not started/);
    expect(units.kubernetes?.reason).toMatch(/no package manager \(apt or dnf\) in .*kubelet/);
    expect(readFileSync(file('/etc/default/kubelet'), 'utf8')).toContain('--node-labels=gpu=h100');
    expect(units['nvidia-driver']?.reason).toMatch(/unknown unit nvidia-driver/);
    expect(readFileSync(file('/etc/nvidia/time-slicing.yaml'), 'utf8')).toContain('replicas: 4');
    // The state the agent reports (inventory.refresh) is on disk too.
    expect(JSON.parse(readFileSync(path.join(dataDir, 'host-state.json'), 'utf8'))).toMatchObject({ profile: 'gpu-host@1', root: root.dir, changed: true });
  });

  it('is idempotent: a second pass changes nothing and says so', async () => {
    const before = statSync(file('/etc/modprobe.d/90-ironflow.conf')).mtimeMs;
    const state = await converger.converge(spec);
    expect(state?.changed).toBe(false);
    expect(state?.units.every((u) => !u.changed && u.drifted.length === 0)).toBe(true);
    expect(state?.units.map((u) => u.state)).toEqual(['converged', 'converged', 'pending', 'converged', 'unsupported', 'converged', 'failed']);
    expect(statSync(file('/etc/modprobe.d/90-ironflow.conf')).mtimeMs).toBe(before);
  });

  it('finds a file changed by hand (content or mode), reports it drifted and sets it back, also after a restart', async () => {
    const modprobe = file('/etc/modprobe.d/90-ironflow.conf');
    const original = readFileSync(modprobe, 'utf8');
    writeFileSync(modprobe, 'blacklist vfio_pci\n');
    chmodSync(file('/etc/sysctl.d/90-ironflow-hugepages.conf'), 0o666);
    const state = await converger.converge(spec);
    expect(byName(state)['kernel-modules']).toMatchObject({ state: 'converged', changed: true, drifted: ['/etc/modprobe.d/90-ironflow.conf'] });
    expect(byName(state).hugepages).toMatchObject({ state: 'converged', drifted: ['/etc/sysctl.d/90-ironflow-hugepages.conf'] });
    expect(readFileSync(modprobe, 'utf8')).toBe(original);
    expect(statSync(file('/etc/sysctl.d/90-ironflow-hugepages.conf')).mode & 0o7777).toBe(0o644);

    // A restarted agent knows what it wrote (host-state.json): drift is still drift, not a new spec.
    writeFileSync(file('/etc/nvidia/time-slicing.yaml'), 'replicas: 64\n');
    const restarted = new HostConverger(dataDir, root, quiet());
    const again = await restarted.converge(spec);
    expect(byName(again)['gpu-sharing']).toMatchObject({ state: 'converged', drifted: ['/etc/nvidia/time-slicing.yaml'] });
    expect(readFileSync(file('/etc/nvidia/time-slicing.yaml'), 'utf8')).toContain('replicas: 4');
  });

  it('a new spec changes files without calling it drift; 1G huge pages go on the kernel command line (reboot required)', async () => {
    const next = {
      ...spec,
      workflowId: 'node:node_x:deploying:5',
      units: [{ name: 'hugepages', source: 'pool', known: true, settings: { size: '1G', count: 16, perNumaNode: false } }],
    };
    const state = await converger.converge(next);
    expect(byName(state).hugepages).toMatchObject({ state: 'converged', changed: true, drifted: [], rebootRequired: true });
    expect(readFileSync(file('/etc/default/grub.d/90-ironflow-hugepages.cfg'), 'utf8')).toContain('default_hugepagesz=1G hugepagesz=1G hugepages=16');
  });

  it('packages on the real host ask its package manager and install nothing that is there (read-only here: dpkg is installed)', async () => {
    const host = new HostRoot('/');
    expect(host.packageManager(), 'this test host has apt and dpkg-query (Debian: apt-get install -y apt)').toBe('apt');
    expect(await applyAction(host, { kind: 'packages', names: ['dpkg'] }, {})).toMatchObject({ changed: false, drifted: [] });
    // A directory root is another OS's tree: apt would act on this host, so it is not done there.
    expect((await applyAction(root, { kind: 'packages', names: ['dpkg'] }, {})).unsupported).toMatch(/no package manager/);
  });

  it('is bounded: a unit whose file would pass 64 KiB fails without writing it', async () => {
    const labels = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`example.com/label-${i}-${'x'.repeat(200)}`, 'v']));
    const big = { ...spec, units: [{ name: 'kubernetes', source: 'pool', known: true, settings: { role: 'worker', labels, taints: [] } }] };
    const scratch = new HostConverger(temp('host-data-'), new HostRoot(temp('host-root-')), quiet());
    const state = await scratch.converge(big);
    expect(byName(state).kubernetes).toMatchObject({ state: 'failed', reason: expect.stringMatching(/more than 65536 bytes is refused/) });
    expect(existsSync(scratch.root.path('/etc/default/kubelet'))).toBe(false);
  });

  it('refuses host paths that leave the root', () => {
    expect(() => root.path('/etc/../../outside')).toThrow(/not an absolute host path/);
    expect(() => root.path('etc/passwd')).toThrow(/not an absolute host path/);
  });
});

describe('node facts and gpu.reset from the host under a root', () => {
  const description = (gpus: number, n: number): MachineDescription => ({
    id: `m${n}`,
    uuid: `6f1c0b7e-0000-4000-8000-00000000000${n}`,
    macs: [`52:54:00:00:10:0${n}`],
    ips: [],
    arch: 'x86_64',
    uefi: true,
    diskBytes: 1024,
    gpus,
  });
  const machineWith = (gpus: number, n: number) => new Machine(description(gpus, n), { dataDir: temp('facts-'), bootServerUrl: () => undefined });

  it('reads the DMI product UUID, CPUs, memory and GPUs (sysfs PCI, named by nvidia-smi) of an emulated machine’s OS root', async () => {
    const machine = machineWith(2, 1);
    const facts = await readHostMachine(layOutEmulatedOsRoot(machine, 'gpu-host'));
    expect(facts).toMatchObject({ hostname: 'gpu-host', productUuid: machine.description.uuid, cpus: 4, memoryBytes: 8 * 1024 ** 3 });
    expect(facts.gpus).toEqual(machine.hardware().gpus.map((g) => ({ model: 'Emulated GPU', uuid: g.uuid })));
  });

  it('without nvidia-smi the GPUs are the PCI devices of class 0x0300/0x0302 with NVIDIA’s vendor id; other display devices are not GPUs', async () => {
    const dir = temp('sysfs-root-');
    const put = (p: string, text: string) => {
      const f = path.join(dir, p);
      mkdirSync(path.dirname(f), { recursive: true });
      writeFileSync(f, text);
    };
    put('sys/class/dmi/id/product_uuid', '4C4C4544-0042-3510-8052-B4C04F4E3732\n');
    put('sys/bus/pci/devices/0000:3b:00.0/class', '0x030200\n');
    put('sys/bus/pci/devices/0000:3b:00.0/vendor', '0x10de\n');
    put('sys/bus/pci/devices/0000:3b:00.0/device', '0x2330\n');
    put('sys/bus/pci/devices/0000:5e:00.0/class', '0x030000\n');
    put('sys/bus/pci/devices/0000:5e:00.0/vendor', '0x10de\n');
    put('sys/bus/pci/devices/0000:5e:00.0/device', '0x1eb8\n');
    put('sys/bus/pci/devices/0000:03:00.0/class', '0x030000\n'); // the BMC's ASPEED VGA
    put('sys/bus/pci/devices/0000:03:00.0/vendor', '0x1a03\n');
    put('sys/bus/pci/devices/0000:03:00.0/device', '0x2000\n');
    const facts = await readHostMachine(new HostRoot(dir));
    expect(facts.productUuid).toBe('4c4c4544-0042-3510-8052-b4c04f4e3732');
    expect(facts.gpus).toEqual([
      { model: 'pci 10de:2330', uuid: 'pci-0000:3b:00.0' },
      { model: 'pci 10de:1eb8', uuid: 'pci-0000:5e:00.0' },
    ]);
    expect(existsSync(path.join(dir, 'usr/bin/nvidia-smi'))).toBe(false);
  });

  it('gpu.reset runs the host’s nvidia-smi for each GPU (the emulated tool records it); UNSUPPORTED naming the host without one', async () => {
    const machine = machineWith(2, 2);
    const root = layOutEmulatedOsRoot(machine, 'gpu-host');
    const answer = await resetGpus(root, 'gpu-host');
    const uuids = machine.hardware().gpus.map((g) => g.uuid);
    expect(answer).toEqual({ tool: root.path('/usr/bin/nvidia-smi'), reset: uuids.map((uuid, index) => ({ index, uuid })) });
    expect(readFileSync(gpuResetLog(machine), 'utf8')).toBe(uuids.map((uuid, i) => `reset ${i} ${uuid}\n`).join(''));

    const plain = layOutEmulatedOsRoot(machineWith(0, 3), 'plain-host');
    const error = await resetGpus(plain, 'plain-host').catch((e: unknown) => e);
    expect(isIronflowError(error) && error.code).toBe('UNSUPPORTED');
    expect((error as Error).message).toMatch(/plain-host has no nvidia-smi/);
  });
});
