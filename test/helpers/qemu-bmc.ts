// The emulated Redfish BMC (agent/emulator/redfish-bmc.ts) driving QEMU machines: when the
// BMC's firmware logic boots a machine from the network, its QEMU process starts (network
// boot is all QEMU machines do here); a power-off kills it. So metal.ensureRamdisk's
// one-time PXE and power cycle, sent by the real site agent, start real firmware.
import { randomBytes } from 'node:crypto';
import { RedfishBmcHost } from '../../agent/emulator/redfish-bmc';
import { startQemuMachine, type QemuMachine, type QemuMachineOptions } from './qemu';

export interface QemuBmcMachine {
  /** The address and credentials to enroll the node with. */
  bmc: { address: string; username: string; password: string };
  /** Each boot's QEMU process, in order. */
  boots: QemuMachine[];
  /** Resolves with the first boot's machine. */
  firstBoot: Promise<QemuMachine>;
}

export class QemuBmc {
  private readonly machines = new Map<string, { spec: Omit<QemuMachineOptions, 'name'>; record: QemuBmcMachine; booted: (m: QemuMachine) => void }>();

  private constructor(readonly host: RedfishBmcHost) {
    host.on('boot', (event) => {
      const entry = this.machines.get(event.machineId);
      if (!entry || event.device !== 'pxe') return;
      const machine = startQemuMachine({ ...entry.spec, name: `${event.machineId}-boot${entry.record.boots.length + 1}` });
      entry.record.boots.push(machine);
      entry.booted(machine);
    });
    host.on('power', (event) => {
      if (event.state === 'off') for (const machine of this.machines.get(event.machineId)?.record.boots ?? []) void machine.kill();
    });
  }

  /** A BMC host on the host's 127.0.0.1 (a test forwards its port into the agent's namespace). */
  static async start(): Promise<QemuBmc> {
    return new QemuBmc(await RedfishBmcHost.start({ host: '127.0.0.1' }));
  }

  get port(): number {
    return Number(new URL(this.host.url).port);
  }

  add(id: string, spec: Omit<QemuMachineOptions, 'name'>): QemuBmcMachine {
    const password = randomBytes(12).toString('base64url');
    this.host.add({ id, uuid: spec.uuid, macs: [spec.mac], username: 'admin', password, powerState: 'Off', defaultBoot: 'disk' });
    let booted!: (m: QemuMachine) => void;
    const record: QemuBmcMachine = {
      bmc: { address: `${this.host.url}/redfish/v1/Systems/${id}`, username: 'admin', password },
      boots: [],
      firstBoot: new Promise((resolve) => (booted = resolve)),
    };
    this.machines.set(id, { spec, record, booted });
    return record;
  }

  async close(): Promise<void> {
    await Promise.all([...this.machines.values()].flatMap((m) => m.record.boots.map((b) => b.kill())));
    await this.host.close();
  }
}
