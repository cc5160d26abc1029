// QEMU machines behind the emulated Redfish BMC (agent/emulator/redfish-bmc.ts), as
// sushy-tools' libvirt driver puts libvirt domains behind its Redfish API: the host's 'boot'
// event (after a power-on, once its firmware logic chose the device from the one-time or
// persistent override or the default) starts the machine's QEMU with that device first; a
// 'power' off stops it (a cycle or restart is an off then a boot). Each machine's commands
// run in order, one at a time. A guest that powers itself off is reported by the BMC as Off.
import { randomBytes } from 'node:crypto';
import { AgentLog } from '../common/log';
import { QemuMachine, type QemuMachineSpec } from './qemu-machine';
import type { RedfishBmcHost } from './redfish-bmc';

interface Backed {
  machine: QemuMachine;
  /** The machine's commands, chained so a power-off finishes before the next power-on. */
  queue: Promise<unknown>;
}

export class QemuBmcBackend {
  private readonly machines = new Map<string, Backed>();

  constructor(
    readonly host: RedfishBmcHost,
    private readonly log: AgentLog = new AgentLog(() => undefined),
  ) {
    host.on('boot', (event) => this.enqueue(event.machineId, 'power on', (machine) => machine.powerOn(event.device, event.image)));
    host.on('power', (event) => {
      if (event.state === 'off') this.enqueue(event.machineId, 'power off', (machine) => machine.stop());
    });
  }

  /**
   * Backs the BMC's machine `spec.id` (already added to the host, with the same UUID and MAC)
   * with a QEMU machine.
   */
  attach(spec: QemuMachineSpec): QemuMachine {
    const bmcMachine = this.host.get(spec.id);
    if (!bmcMachine) throw new RangeError(`the BMC has no machine ${spec.id}`);
    const machine = new QemuMachine(spec, (boot) => {
      // The guest ended its own process (poweroff -f): the BMC reads Off, as a server's does.
      bmcMachine.powerState = 'Off';
      this.log.info('QEMU machine powered itself off', { machine: spec.id, boot: boot.index });
    });
    this.machines.set(spec.id, { machine, queue: Promise.resolve() });
    return machine;
  }

  /** Adds machine `spec.id` to the BMC host (Off, disk by default, fresh credentials), backed by a QEMU machine. */
  add(spec: QemuMachineSpec): { bmc: { address: string; username: string; password: string }; machine: QemuMachine } {
    const password = randomBytes(12).toString('base64url');
    this.host.add({ id: spec.id, uuid: spec.uuid, macs: [spec.mac], username: 'admin', password, powerState: 'Off', defaultBoot: 'disk' });
    return { bmc: { address: `${this.host.url}/redfish/v1/Systems/${spec.id}`, username: 'admin', password }, machine: this.attach(spec) };
  }

  get(id: string): QemuMachine | undefined {
    return this.machines.get(id)?.machine;
  }

  /** Stops every machine's QEMU (the BMC host stays up: its owner closes it). */
  async close(): Promise<void> {
    await Promise.all([...this.machines.values()].map((backed) => backed.queue.then(() => backed.machine.stop())));
  }

  private enqueue(id: string, what: string, command: (machine: QemuMachine) => Promise<unknown>): void {
    const backed = this.machines.get(id);
    if (!backed) return;
    backed.queue = backed.queue
      .then(() => command(backed.machine))
      .catch((error: unknown) => {
        this.log.warn(`QEMU machine ${what} failed`, { machine: id, error: error instanceof Error ? error.message : String(error) });
      });
  }
}
