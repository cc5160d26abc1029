// The emulated Redfish BMC (agent/emulator/redfish-bmc.ts) with QEMU machines behind it
// (agent/emulator/qemu-bmc.ts) on a test network: metal.ensureRamdisk's one-time PXE and
// power-on, sent by the real site agent, start real firmware.
import { QemuBmcBackend } from '../../agent/emulator/qemu-bmc';
import type { QemuMachine } from '../../agent/emulator/qemu-machine';
import { RedfishBmcHost } from '../../agent/emulator/redfish-bmc';
import { qemuSpecOn, type TestQemuMachineOptions } from './qemu';

export interface QemuBmcMachine {
  /** The address and credentials to enroll the node with. */
  bmc: { address: string; username: string; password: string };
  /** Its QEMU machine (machine.boots: each power-on's process). */
  machine: QemuMachine;
}

export class QemuBmc {
  private constructor(
    readonly host: RedfishBmcHost,
    readonly backend: QemuBmcBackend,
  ) {}

  /** A BMC host on the host's 127.0.0.1 (a test forwards its port into the agent's namespace). */
  static async start(): Promise<QemuBmc> {
    const host = await RedfishBmcHost.start({ host: '127.0.0.1' });
    return new QemuBmc(host, new QemuBmcBackend(host));
  }

  get port(): number {
    return Number(new URL(this.host.url).port);
  }

  add(options: Omit<TestQemuMachineOptions, 'name'> & { id: string }): QemuBmcMachine {
    return this.backend.add(qemuSpecOn({ ...options, name: options.id }));
  }

  async close(): Promise<void> {
    await this.backend.close();
    await this.host.close();
  }
}
