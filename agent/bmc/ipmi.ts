// The IPMI driver: ipmitool over lanplus (RMCP+). Power, boot device and the system GUID;
// IPMI cannot name the machine's NICs, which is what PXE discovery is for. The password
// goes to ipmitool through its environment (-E), never on the command line.
import { execFile } from 'node:child_process';
import { IronflowError } from '../../core/errors';
import type { IpmiTarget } from '../../core/schemas/bmc';
import {
  driverError,
  type BmcCredentials,
  type BmcDriver,
  type BootDevice,
  type BootSetting,
  type Inspection,
  type PowerAction,
  type PowerState,
} from './driver';
import { bmcLimiter, type KeyedLimiter } from './limiter';

export interface IpmiDriverOptions {
  /** ipmitool's path; `ipmitool` on PATH by default. */
  ipmitool?: string;
  /** Per-attempt timeout ipmitool uses (-N), seconds. */
  attemptTimeoutSeconds?: number;
  /** ipmitool's retries (-R). */
  retries?: number;
  limiter?: KeyedLimiter;
}

const ipmitoolDeviceOf: Record<BootDevice, string> = { pxe: 'pxe', disk: 'disk', cd: 'cdrom' };

export function createIpmiDriver(target: IpmiTarget, credentials: BmcCredentials, options: IpmiDriverOptions = {}): BmcDriver {
  return new IpmiDriver(target, credentials, options);
}

function splitHostPort(address: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:]+)\]|([^:]+))(?::(\d{1,5}))?$/.exec(address);
  if (!match) throw new IronflowError('INVALID_INPUT', `IPMI address ${address} is not host or host:port`, { path: 'address' });
  return { host: match[1] ?? match[2] ?? '', port: match[3] ? Number(match[3]) : 623 };
}

class IpmiDriver implements BmcDriver {
  readonly name = 'ipmi' as const;
  readonly address: string;
  readonly bmcId: string;
  private readonly host: string;
  private readonly port: number;
  private readonly limiter: KeyedLimiter;

  constructor(
    private readonly target: IpmiTarget,
    private readonly credentials: BmcCredentials,
    private readonly options: IpmiDriverOptions,
  ) {
    const { host, port } = splitHostPort(target.address);
    this.host = host;
    this.port = port;
    this.address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.bmcId = `ipmi:${this.address}`;
    this.limiter = options.limiter ?? bmcLimiter;
  }

  readonly power = {
    get: (): Promise<PowerState> => this.limited(() => this.powerState()),
    set: (action: PowerAction): Promise<void> => this.limited(() => this.setPower(action)),
  };

  readonly management = {
    getBoot: (): Promise<BootSetting | null> => this.limited(() => this.getBoot()),
    setBoot: (setting: BootSetting): Promise<void> =>
      this.limited(async () => {
        const args = ['chassis', 'bootdev', ipmitoolDeviceOf[setting.device]];
        if (setting.persistent) args.push('options=persistent');
        await this.run('management.setBoot', args);
      }),
  };

  inspect(): Promise<Inspection> {
    return this.limited(async () => {
      const out = await this.run('inspect', ['mc', 'guid']);
      const guid = /System GUID\s*:\s*([0-9a-fA-F-]{32,36})/.exec(out)?.[1]?.toLowerCase() ?? null;
      return { systemUuid: guid, pxeMacs: [], ips: [] };
    });
  }

  async close(): Promise<void> {
    // ipmitool holds nothing between commands.
  }

  private limited<T>(fn: () => Promise<T>): Promise<T> {
    return this.limiter.run(this.bmcId, fn);
  }

  private async powerState(): Promise<PowerState> {
    const out = await this.run('power.get', ['power', 'status']);
    const state = /Chassis Power is (on|off)/i.exec(out)?.[1]?.toLowerCase();
    if (state !== 'on' && state !== 'off') throw driverError(this.context('power.get'), `unexpected answer: ${out}`, [this.credentials.password]);
    return state;
  }

  private async setPower(action: PowerAction): Promise<void> {
    const state = await this.powerState();
    if (action === 'on' && state === 'on') return;
    if (action === 'off' && state === 'off') return;
    // Most BMCs refuse a cycle or reset of a machine that is off: that one just powers on.
    const command = (action === 'cycle' || action === 'reset') && state === 'off' ? 'on' : action;
    await this.run(`power.set(${action})`, ['power', command]);
  }

  private async getBoot(): Promise<BootSetting | null> {
    const out = await this.run('management.getBoot', ['chassis', 'bootparam', 'get', '5']);
    if (/Boot Flag Invalid/i.test(out)) return null;
    const selector = /Boot Device Selector\s*:\s*(.+)/i.exec(out)?.[1] ?? '';
    const device: BootDevice | undefined = /PXE/i.test(selector)
      ? 'pxe'
      : /Hard-Drive|Hard Drive|disk/i.test(selector)
        ? 'disk'
        : /CD|DVD/i.test(selector)
          ? 'cd'
          : undefined;
    if (!device) return null;
    return { device, persistent: /Options apply to all future boots/i.test(out) };
  }

  private run(operation: string, command: string[]): Promise<string> {
    const args = [
      '-I',
      'lanplus',
      '-H',
      this.host,
      '-p',
      String(this.port),
      '-U',
      this.credentials.username,
      '-E',
      '-C',
      String(this.target.cipherSuite),
      '-N',
      String(this.options.attemptTimeoutSeconds ?? 2),
      '-R',
      String(this.options.retries ?? 3),
      ...command,
    ];
    const budgetMs = ((this.options.attemptTimeoutSeconds ?? 2) * ((this.options.retries ?? 3) + 1) + 10) * 1000;
    return new Promise((resolve, reject) => {
      execFile(
        this.options.ipmitool ?? 'ipmitool',
        args,
        // Only what ipmitool needs: the password, and a PATH/locale so its messages are English.
        {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', IPMI_PASSWORD: this.credentials.password },
          timeout: budgetMs,
          maxBuffer: 1024 * 1024,
        },
        (error, stdout, stderr) => {
          if (!error) return resolve(stdout);
          const err = error as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
          if (err.code === 'ENOENT') {
            return reject(
              new IronflowError('DRIVER_ERROR', 'ipmitool is not installed on the site agent; install it (Debian: apt-get install ipmitool)', {
                driver: 'ipmi',
                operation,
              }),
            );
          }
          const message = err.killed ? `ipmitool gave no answer within ${budgetMs} ms` : stderr.trim() || stdout.trim() || err.message;
          reject(
            driverError(
              {
                ...this.context(operation),
                ...(typeof err.code === 'number' ? { status: err.code } : {}),
                outcomeUnknown: err.killed === true && operation.startsWith('power.set'),
              },
              message,
              [this.credentials.password],
            ),
          );
        },
      );
    });
  }

  private context(operation: string) {
    return { driver: 'ipmi' as const, address: this.address, operation };
  }
}
