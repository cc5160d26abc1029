// Host config units (spec 003 "Host config"): what a deployed node's host converger applies,
// in this order. Each unit has typed settings; any unit also takes `when`, a label
// expression. Modules add units with hostConfigUnits.register (a typed registry); a unit
// nobody registered still reaches the node, which reports it as a terminal failure once
// the units it knows had their turn.
import { z } from 'zod';

const cpuList = z
  .string()
  .max(256)
  .regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/, 'a CPU list such as 2-15,18');

export const builtinUnitSettings = {
  hugepages: z.object({ size: z.enum(['2M', '1G']), count: z.number().int().min(0).max(1_048_576), perNumaNode: z.boolean().default(false) }).strict(),
  'kernel-modules': z
    .object({
      load: z
        .array(z.string().regex(/^[a-z0-9_-]{1,64}$/, 'a module name'))
        .max(64)
        .default([]),
      blacklist: z
        .array(z.string().regex(/^[a-z0-9_-]{1,64}$/, 'a module name'))
        .max(64)
        .default([]),
      options: z
        .record(
          z.string().regex(/^[a-z0-9_-]{1,64}$/),
          z
            .string()
            .max(256)
            .regex(/^[^\n\r]*$/, 'one line'),
        )
        .default({}),
    })
    .strict(),
  cpu: z
    .object({ governor: z.enum(['performance', 'powersave', 'schedutil', 'ondemand']).optional(), isolated: cpuList.optional(), smt: z.boolean().optional() })
    .strict(),
  iommu: z.object({ mode: z.enum(['on', 'off', 'passthrough']) }).strict(),
  gpu: z
    .object({
      driverBranch: z
        .string()
        .regex(/^\d{3}$/, 'a driver branch such as 580')
        .optional(),
      persistenceMode: z.boolean().default(true),
      mig: z.enum(['off', 'on']).default('off'),
    })
    .strict(),
  kubernetes: z
    .object({
      version: z
        .string()
        .regex(/^1\.\d{1,3}(\.\d{1,3})?$/, 'a Kubernetes version such as 1.31')
        .optional(),
      role: z.enum(['worker', 'control-plane']).default('worker'),
      labels: z.record(z.string().max(253), z.string().max(63)).default({}),
      taints: z.array(z.string().max(316)).max(32).default([]),
    })
    .strict(),
  'gpu-sharing': z.object({ strategy: z.enum(['mps', 'timeslice']), replicas: z.number().int().min(2).max(64) }).strict(),
} as const;

export type BuiltinUnitName = keyof typeof builtinUnitSettings;

/** The pool policy field that replaces each built-in unit. */
export const poolUnitFields: Record<BuiltinUnitName, string> = {
  hugepages: 'hugepages',
  'kernel-modules': 'kernelModules',
  cpu: 'cpu',
  iommu: 'iommu',
  gpu: 'gpu',
  kubernetes: 'kubernetes',
  'gpu-sharing': 'gpuSharing',
};

export interface HostConfigUnit<S extends z.ZodType = z.ZodType> {
  name: string;
  summary: string;
  settings: S;
}

export const unitNamePattern = /^[a-z0-9][a-z0-9.-]*$/;

export class HostConfigUnitRegistry {
  private readonly units = new Map<string, HostConfigUnit>();

  register<S extends z.ZodType>(unit: HostConfigUnit<S>): void {
    if (!unitNamePattern.test(unit.name)) throw new Error(`host config unit ${unit.name}: a unit name is lower-case letters, digits, dots and dashes`);
    if (this.units.has(unit.name)) throw new Error(`host config unit ${unit.name} is registered already`);
    this.units.set(unit.name, unit);
  }

  get(name: string): HostConfigUnit | undefined {
    return this.units.get(name);
  }

  /** Registered names in apply order: the built-ins, then the others as registered. */
  names(): string[] {
    return [...this.units.keys()];
  }
}

const summaries: Record<BuiltinUnitName, string> = {
  hugepages: 'reserves huge pages (kernel command line and sysctl)',
  'kernel-modules': 'loads, configures and blacklists kernel modules',
  cpu: 'CPU governor, isolated CPUs and SMT',
  iommu: 'IOMMU mode on the kernel command line',
  gpu: 'GPU driver branch, persistence mode and MIG',
  kubernetes: 'joins the node to Kubernetes with labels and taints',
  'gpu-sharing': 'shares GPUs by MPS or time-slicing',
};

export function createHostConfigUnitRegistry(): HostConfigUnitRegistry {
  const registry = new HostConfigUnitRegistry();
  for (const [name, settings] of Object.entries(builtinUnitSettings)) registry.register({ name, summary: summaries[name as BuiltinUnitName], settings });
  return registry;
}

/** The process-wide registry (modules register their units at load). */
export const hostConfigUnits = createHostConfigUnitRegistry();
