// What each built-in host config unit (core/host-config/units.ts) does on the host, as the
// actions of agent/node/host-actions.ts. Kernel command line arguments go to a GRUB drop-in
// (/etc/default/grub.d, read by update-grub) and need a reboot; they are reported so.
// A unit this table does not know is not applied (the converger reports it failed).
import type { z } from 'zod';
import type { builtinUnitSettings, BuiltinUnitName } from '../../core/host-config/units';
import type { HostAction } from './host-actions';

type Settings<N extends BuiltinUnitName> = z.infer<(typeof builtinUnitSettings)[N]>;

const HEADER = '# Written by the Ironflow node agent (host config); changes are restored.\n';

const kernelArgs = (unit: string, args: string[]): HostAction => ({
  kind: 'file',
  path: `/etc/default/grub.d/90-ironflow-${unit}.cfg`,
  content: `${HEADER}GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT ${args.join(' ')}"\n`,
  mode: 0o644,
  rebootRequired: true,
});

const oneshot = (description: string, commands: string[]): string =>
  `${HEADER}[Unit]\nDescription=${description}\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\n${commands.map((c) => `ExecStart=${c}\n`).join('')}\n[Install]\nWantedBy=multi-user.target\n`;

export const hostUnitActions: { [N in BuiltinUnitName]: (settings: Settings<N>) => HostAction[] } = {
  hugepages(s) {
    // 2M pages can be reserved at run time; 1G pages only at boot, reliably.
    if (s.size === '1G') return [kernelArgs('hugepages', ['default_hugepagesz=1G', 'hugepagesz=1G', `hugepages=${s.count}`])];
    if (s.perNumaNode) {
      return [
        {
          kind: 'systemd',
          name: 'ironflow-hugepages.service',
          content: oneshot('Ironflow: 2M huge pages on every NUMA node', [
            `/bin/sh -c 'for f in /sys/devices/system/node/node*/hugepages/hugepages-2048kB/nr_hugepages; do echo ${s.count} > "$f"; done'`,
          ]),
        },
      ];
    }
    return [{ kind: 'sysctl', file: '/etc/sysctl.d/90-ironflow-hugepages.conf', values: { 'vm.nr_hugepages': String(s.count) } }];
  },
  'kernel-modules'(s) {
    const modprobe = [...s.blacklist.map((m) => `blacklist ${m}\n`), ...Object.entries(s.options).map(([m, o]) => `options ${m} ${o}\n`)].join('');
    return [
      { kind: 'file', path: '/etc/modules-load.d/90-ironflow.conf', content: `${HEADER}${s.load.map((m) => `${m}\n`).join('')}`, mode: 0o644 },
      { kind: 'file', path: '/etc/modprobe.d/90-ironflow.conf', content: `${HEADER}${modprobe}`, mode: 0o644 },
    ];
  },
  cpu(s) {
    const actions: HostAction[] = [];
    const args = [...(s.isolated ? [`isolcpus=${s.isolated}`, `nohz_full=${s.isolated}`] : []), ...(s.smt === false ? ['nosmt'] : [])];
    if (args.length > 0) actions.push(kernelArgs('cpu', args));
    if (s.governor) {
      actions.push({
        kind: 'systemd',
        name: 'ironflow-cpu-governor.service',
        content: oneshot(`Ironflow: CPU governor ${s.governor}`, [
          `/bin/sh -c 'for f in /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; do echo ${s.governor} > "$f"; done'`,
        ]),
      });
    }
    return actions;
  },
  iommu(s) {
    const args = {
      on: ['intel_iommu=on', 'amd_iommu=on'],
      off: ['intel_iommu=off', 'amd_iommu=off'],
      passthrough: ['intel_iommu=on', 'amd_iommu=on', 'iommu=pt'],
    }[s.mode];
    return [kernelArgs('iommu', args)];
  },
  gpu(s) {
    const commands = [`/usr/bin/nvidia-smi -pm ${s.persistenceMode ? 1 : 0}`, `/usr/bin/nvidia-smi -mig ${s.mig === 'on' ? 1 : 0}`];
    const driver: HostAction[] = s.driverBranch ? [{ kind: 'packages', names: [`nvidia-driver-${s.driverBranch}`] }] : [];
    return [...driver, { kind: 'systemd', name: 'ironflow-gpu.service', content: oneshot('Ironflow: GPU persistence mode and MIG', commands) }];
  },
  kubernetes(s) {
    const labels = Object.entries(s.labels).map(([k, v]) => `${k}=${v}`);
    const flags = [
      ...(labels.length ? [`--node-labels=${labels.join(',')}`] : []),
      ...(s.taints.length ? [`--register-with-taints=${s.taints.join(',')}`] : []),
    ];
    return [
      { kind: 'packages', names: ['kubelet'] },
      { kind: 'file', path: '/etc/default/kubelet', content: `${HEADER}KUBELET_EXTRA_ARGS="${flags.join(' ')}"\n`, mode: 0o644 },
      {
        kind: 'file',
        path: '/etc/ironflow/kubernetes.json',
        content: `${JSON.stringify({ role: s.role, ...(s.version ? { version: s.version } : {}) })}\n`,
        mode: 0o644,
      },
    ];
  },
  'gpu-sharing'(s) {
    if (s.strategy === 'mps') {
      return [
        {
          kind: 'systemd',
          name: 'ironflow-gpu-mps.service',
          content: `${HEADER}[Unit]\nDescription=Ironflow: NVIDIA MPS control daemon\n\n[Service]\nType=forking\nEnvironment=CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=${Math.floor(100 / s.replicas)}\nExecStart=/usr/bin/nvidia-cuda-mps-control -d\nExecStop=/bin/sh -c 'echo quit | /usr/bin/nvidia-cuda-mps-control'\n\n[Install]\nWantedBy=multi-user.target\n`,
        },
      ];
    }
    // The NVIDIA device plugin's time-slicing config.
    const config = `${HEADER}version: v1\nsharing:\n  timeSlicing:\n    resources:\n      - name: nvidia.com/gpu\n        replicas: ${s.replicas}\n`;
    return [{ kind: 'file', path: '/etc/nvidia/time-slicing.yaml', content: config, mode: 0o644 }];
  },
};

export function isBuiltinUnit(name: string): name is BuiltinUnitName {
  return Object.hasOwn(hostUnitActions, name);
}
