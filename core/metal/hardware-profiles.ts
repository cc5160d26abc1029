// Hardware profiles: per-concern driver choices a pool's machines share (spec 003 "Driver
// bindings from the hardware profile"), and resolveDriverBindings, which builds a node's
// bindings in three layers: the BMC given at enroll, the hardware profile, per-node overrides.
import { IronflowError } from '../errors';

export const driverConcerns = ['power', 'management', 'virtual-media', 'boot', 'deploy', 'inspect'] as const;
export type DriverConcern = (typeof driverConcerns)[number];

export interface HardwareProfile {
  description: string;
  drivers: Partial<Record<DriverConcern, string>>;
}

export interface DriverBinding {
  driver: string;
  /** References only (address, credentials reference), never a secret. */
  config?: Record<string, string>;
}
export type DriverBindings = Partial<Record<DriverConcern, DriverBinding>>;

const shipped: Record<string, HardwareProfile> = {
  'redfish-ipxe': {
    description: 'Redfish BMC, iPXE boot, image streaming from the ramdisk',
    drivers: { power: 'redfish', management: 'redfish', 'virtual-media': 'redfish', boot: 'ipxe', deploy: 'image-stream', inspect: 'agent' },
  },
  'ipmi-ipxe': {
    description: 'IPMI BMC, iPXE boot, image streaming from the ramdisk',
    drivers: { power: 'ipmi', management: 'ipmi', boot: 'ipxe', deploy: 'image-stream', inspect: 'agent' },
  },
  'gpu-redfish': {
    description: 'GPU servers with a Redfish BMC: iPXE boot, image streaming, in-band inspection',
    drivers: { power: 'redfish', management: 'redfish', boot: 'ipxe', deploy: 'image-stream', inspect: 'agent' },
  },
  'oob-redfish': {
    description: 'Agentless machines: Redfish for everything, virtual media for installs',
    drivers: { power: 'redfish', management: 'redfish', 'virtual-media': 'redfish', boot: 'virtual-media', deploy: 'virtual-media', inspect: 'redfish' },
  },
};
const registered = new Map<string, HardwareProfile>(Object.entries(shipped));

/** Operators' own hardware profiles (the spec's metal({ hardwareProfiles })). */
export function registerHardwareProfile(name: string, profile: HardwareProfile): void {
  registered.set(name, profile);
}

export function hardwareProfileNames(): string[] {
  return [...registered.keys()].sort();
}

export function hardwareProfile(name: string, path = 'hardwareProfile'): HardwareProfile {
  const profile = registered.get(name);
  if (!profile) throw new IronflowError('INVALID_INPUT', `unknown hardware profile ${name}; known: ${hardwareProfileNames().join(', ')}`, { path });
  return profile;
}

export interface BindingInputs {
  bmc: { driver: string; address: string; credentialsRef: string };
  /** The node's hardware profile, else the pool's policy.hardwareProfile. */
  hardwareProfile?: string;
  /** Where the profile name came from, for the error path. */
  hardwareProfilePath?: string;
  overrides?: Partial<Record<DriverConcern, string>>;
}

export function resolveDriverBindings(input: BindingInputs): DriverBindings {
  const bmcConfig = { address: input.bmc.address, credentialsRef: input.bmc.credentialsRef };
  const bindings: DriverBindings = {
    power: { driver: input.bmc.driver, config: bmcConfig },
    management: { driver: input.bmc.driver, config: bmcConfig },
    'virtual-media': { driver: input.bmc.driver, config: bmcConfig },
  };
  const layer = (drivers: Partial<Record<DriverConcern, string>>) => {
    for (const concern of driverConcerns) {
      const driver = drivers[concern];
      if (!driver) continue;
      // A BMC driver keeps the BMC's address and credentials; any other driver has none.
      bindings[concern] = driver === input.bmc.driver ? { driver, config: bmcConfig } : { driver };
    }
  };
  if (input.hardwareProfile) layer(hardwareProfile(input.hardwareProfile, input.hardwareProfilePath).drivers);
  layer(input.overrides ?? {});
  return bindings;
}
