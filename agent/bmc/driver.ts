// The BMC driver interfaces the site agent speaks, in the spirit of Ironic's: power,
// management (boot device), inspection, and virtual media where the driver has it.
// A driver is built per step with credentials held in memory only.
import { IronflowError } from '../../core/errors';
import type { bootDevices, powerActions } from '../../core/schemas/bmc';

export type PowerState = 'on' | 'off';
export type PowerAction = (typeof powerActions)[number];
export type BootDevice = (typeof bootDevices)[number];

export interface BootSetting {
  device: BootDevice;
  /** false: the next boot only; true: every boot until changed. */
  persistent: boolean;
}

export interface BmcCredentials {
  username: string;
  password: string;
}

export interface Inspection {
  /** The SMBIOS UUID (Redfish) or the system GUID as the BMC prints it (IPMI); null when unknown. */
  systemUuid: string | null;
  /** MACs of the NICs that can PXE boot, lower case; empty when the BMC cannot tell (IPMI). */
  pxeMacs: string[];
  /** IP addresses the BMC reports for the machine's NICs. */
  ips: string[];
}

export interface PowerInterface {
  get(): Promise<PowerState>;
  /** Sends the action; the BMC may apply it later (see waitForPower). */
  set(action: PowerAction): Promise<void>;
  /**
   * The power state and when the system was last reset, in one read, where the BMC reports
   * that time (Redfish LastResetTime): how a reset whose answer was lost is told apart from one
   * never carried out (agent/bmc/reliable.ts). Absent when the driver cannot read it.
   */
  status?(): Promise<{ power: PowerState; lastReset: string | null }>;
}

interface ManagementInterface {
  /** The boot override in effect, or null when none is set. */
  getBoot(): Promise<BootSetting | null>;
  setBoot(setting: BootSetting): Promise<void>;
}

export interface VirtualMediaInterface {
  /** Inserts the image at url into the virtual CD. */
  insert(url: string): Promise<void>;
  eject(): Promise<void>;
}

export interface BmcDriver {
  readonly name: 'redfish' | 'ipmi';
  /** Where the BMC is, for messages and limits; never carries credentials. */
  readonly address: string;
  /** Names this BMC (driver, address, system) for limits and the operation ledger. */
  readonly bmcId: string;
  readonly power: PowerInterface;
  readonly management: ManagementInterface;
  inspect(): Promise<Inspection>;
  /** Absent when the driver or BMC has no virtual media. */
  readonly virtualMedia?: VirtualMediaInterface;
  /** Releases what the driver holds (a Redfish session). */
  close(): Promise<void>;
}

export function virtualMediaOf(driver: BmcDriver): VirtualMediaInterface {
  if (!driver.virtualMedia) {
    throw new IronflowError('UNSUPPORTED', `the ${driver.name} driver has no virtual media; boot the ISO over the network (sanboot) instead`, {
      driver: driver.name,
    });
  }
  return driver.virtualMedia;
}

/** Removes every occurrence of the secrets from a text a BMC or tool produced. */
export function redact(text: string, secrets: ReadonlyArray<string>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}

interface DriverErrorContext {
  driver: 'redfish' | 'ipmi';
  address: string;
  operation: string;
  /** HTTP status for Redfish, exit code for ipmitool. */
  status?: number;
  /** Whether the BMC may have acted on the request before it failed (a timeout, a dropped connection). */
  outcomeUnknown?: boolean;
}

/** DRIVER_ERROR carrying the BMC's own words, with the password taken out. */
export function driverError(context: DriverErrorContext, bmcMessage: string, secrets: ReadonlyArray<string>): IronflowError {
  const message = redact(bmcMessage.trim(), secrets).slice(0, 2000) || 'no message from the BMC';
  return new IronflowError('DRIVER_ERROR', `${context.driver} BMC ${context.address}: ${context.operation} failed: ${message}`, {
    driver: context.driver,
    address: context.address,
    operation: context.operation,
    bmcMessage: message,
    ...(context.status !== undefined ? { status: context.status } : {}),
    ...(context.outcomeUnknown ? { outcomeUnknown: true } : {}),
  });
}

/** Polls the power state until it is `want`: BMCs apply power changes asynchronously. */
export async function waitForPower(driver: BmcDriver, want: PowerState, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const state = await driver.power.get();
    if (state === want) return;
    if (Date.now() > deadline) {
      throw new IronflowError(
        'DRIVER_ERROR',
        `${driver.name} BMC ${driver.address}: power is still ${state}, expected ${want}; check the machine's power supply and the BMC's event log`,
        {
          driver: driver.name,
          address: driver.address,
          operation: 'power.wait',
        },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 500));
  }
}
