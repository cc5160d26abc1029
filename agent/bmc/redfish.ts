// The Redfish driver: ComputerSystem power and boot override, EthernetInterfaces for
// inspection, VirtualMedia insert/eject. Basic auth or a Redfish session; one operation
// at a time per BMC (bmcLimiter); errors carry the BMC's own message.
import { IronflowError } from '../../core/errors';
import { normalizeMac } from '../../core/mac';
import type { RedfishTarget } from '../../core/schemas/bmc';
import {
  driverError,
  type BmcCredentials,
  type BmcDriver,
  type BootDevice,
  type BootSetting,
  type Inspection,
  type PowerAction,
  type PowerState,
  type VirtualMediaInterface,
} from './driver';
import { JsonClient, TransportError, type JsonResponse } from './http-json';
import { bmcLimiter, type KeyedLimiter } from './limiter';

export interface RedfishDriverOptions {
  timeoutMs?: number;
  limiter?: KeyedLimiter;
}

type Json = Record<string, unknown>;

/** How long an accepted insert or eject may take to show on the virtual CD, and between looks. */
const MEDIA_READ_BACK_MS = 5_000;
const MEDIA_POLL_MS = 250;

const redfishTargetOf: Record<BootDevice, string> = { pxe: 'Pxe', disk: 'Hdd', cd: 'Cd' };
const bootDeviceOf: Record<string, BootDevice> = { Pxe: 'pxe', Hdd: 'disk', Cd: 'cd' };

export function createRedfishDriver(target: RedfishTarget, credentials: BmcCredentials, options: RedfishDriverOptions = {}): BmcDriver {
  return new RedfishDriver(target, credentials, options);
}

class RedfishDriver implements BmcDriver {
  readonly name = 'redfish' as const;
  readonly address: string;
  private readonly client: JsonClient;
  private readonly limiter: KeyedLimiter;
  readonly bmcId: string;
  private systemPath: string | undefined;
  private session: { token: string; location: string | undefined } | undefined;

  constructor(
    private readonly target: RedfishTarget,
    private readonly credentials: BmcCredentials,
    options: RedfishDriverOptions,
  ) {
    const base = new URL(target.address);
    this.address = base.origin;
    this.client = new JsonClient(base, { caPem: target.caPem, timeoutMs: options.timeoutMs });
    this.limiter = options.limiter ?? bmcLimiter;
    this.bmcId = `redfish:${this.address}/${target.systemId ?? ''}`;
    if (target.systemId) this.systemPath = `/redfish/v1/Systems/${encodeURIComponent(target.systemId)}`;
  }

  readonly power = {
    get: (): Promise<PowerState> => this.limited(async () => powerStateOf(await this.getSystem('power.get'))),
    set: (action: PowerAction): Promise<void> => this.limited(() => this.setPower(action)),
    status: (): Promise<{ power: PowerState; lastReset: string | null }> =>
      this.limited(async () => {
        const system = await this.getSystem('power.status');
        return {
          power: powerStateOf(system),
          lastReset: typeof system.LastResetTime === 'string' && system.LastResetTime !== '' ? system.LastResetTime : null,
        };
      }),
  };

  readonly management = {
    getBoot: (): Promise<BootSetting | null> => this.limited(async () => bootSettingOf(await this.getSystem('management.getBoot'))),
    setBoot: (setting: BootSetting): Promise<void> => this.limited(() => this.setBoot(setting)),
  };

  readonly virtualMedia: VirtualMediaInterface = {
    insert: (url: string): Promise<void> => this.limited(() => this.insertMedia(url)),
    eject: (): Promise<void> => this.limited(() => this.ejectMedia()),
  };

  inspect(): Promise<Inspection> {
    return this.limited(() => this.doInspect());
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (session?.location) {
      // Best effort: an abandoned session times out on the BMC anyway.
      await this.client.request('DELETE', session.location, { 'x-auth-token': session.token }).catch(() => undefined);
    }
    this.client.close();
  }

  private limited<T>(fn: () => Promise<T>): Promise<T> {
    return this.limiter.run(this.bmcId, fn);
  }

  private async setPower(action: PowerAction): Promise<void> {
    const system = await this.getSystem('power.set');
    const state = powerStateOf(system);
    const allowed = allowableResetTypes(system);
    let resetType: string;
    switch (action) {
      case 'on':
        if (system.PowerState === 'On') return;
        resetType = 'On';
        break;
      case 'off':
        if (system.PowerState === 'Off') return;
        resetType = 'ForceOff';
        break;
      case 'cycle':
        // PowerCycle where offered; otherwise what Ironic does for a reboot.
        resetType = allowed?.includes('PowerCycle') ? 'PowerCycle' : state === 'on' ? 'ForceRestart' : 'On';
        break;
      case 'reset':
        resetType = 'ForceRestart';
        break;
    }
    const actions = system.Actions as Json | undefined;
    const reset = actions?.['#ComputerSystem.Reset'] as Json | undefined;
    const actionPath = typeof reset?.target === 'string' ? reset.target : `${await this.resolveSystemPath('power.set')}/Actions/ComputerSystem.Reset`;
    await this.call(`power.set(${action})`, 'POST', actionPath, { ResetType: resetType });
  }

  private async setBoot(setting: BootSetting): Promise<void> {
    const system = await this.getSystem('management.setBoot');
    const target = redfishTargetOf[setting.device];
    const boot = system.Boot as Json | undefined;
    const allowed = boot?.['BootSourceOverrideTarget@Redfish.AllowableValues'];
    if (Array.isArray(allowed) && !allowed.includes(target)) {
      throw new IronflowError('UNSUPPORTED', `redfish BMC ${this.address} offers no boot target ${target} (it offers ${allowed.join(', ')})`, {
        driver: 'redfish',
        address: this.address,
        device: setting.device,
      });
    }
    await this.call('management.setBoot', 'PATCH', await this.resolveSystemPath('management.setBoot'), {
      Boot: { BootSourceOverrideTarget: target, BootSourceOverrideEnabled: setting.persistent ? 'Continuous' : 'Once' },
    });
  }

  private async doInspect(): Promise<Inspection> {
    const system = await this.getSystem('inspect');
    const uuid = typeof system.UUID === 'string' && system.UUID !== '' ? system.UUID.toLowerCase() : null;
    const nicsLink = linkOf(system.EthernetInterfaces);
    const pxeMacs: string[] = [];
    const ips: string[] = [];
    if (nicsLink) {
      const collection = (await this.call('inspect', 'GET', nicsLink)).body as Json;
      for (const member of membersOf(collection)) {
        const nic = (await this.call('inspect', 'GET', member)).body as Json;
        const mac = typeof nic.MACAddress === 'string' && nic.MACAddress ? nic.MACAddress : nic.PermanentMACAddress;
        const status = nic.Status as Json | undefined;
        const enabled = nic.InterfaceEnabled !== false && status?.State !== 'Disabled' && status?.State !== 'Absent';
        const pxeMac = typeof mac === 'string' ? normalizeMac(mac) : undefined;
        if (pxeMac && enabled) pxeMacs.push(pxeMac);
        for (const key of ['IPv4Addresses', 'IPv6Addresses']) {
          const list = nic[key];
          if (!Array.isArray(list)) continue;
          for (const entry of list as Json[]) {
            const address = entry?.Address;
            if (typeof address === 'string' && address !== '' && address !== '0.0.0.0' && address !== '::') ips.push(address);
          }
        }
      }
    }
    return { systemUuid: uuid, pxeMacs: [...new Set(pxeMacs)], ips: [...new Set(ips)] };
  }

  /** The virtual CD: under the system (newer Redfish) or its manager (older). */
  private async findVirtualCd(operation: string): Promise<Json & { path: string }> {
    const system = await this.getSystem(operation);
    let collectionLink = linkOf(system.VirtualMedia);
    if (!collectionLink) {
      const links = system.Links as Json | undefined;
      const managedBy = Array.isArray(links?.ManagedBy) ? linkOf(links.ManagedBy[0]) : undefined;
      if (managedBy) collectionLink = linkOf(((await this.call(operation, 'GET', managedBy)).body as Json).VirtualMedia);
    }
    if (!collectionLink) {
      throw new IronflowError('UNSUPPORTED', `redfish BMC ${this.address} has no virtual media; boot the ISO over the network (sanboot) instead`, {
        driver: 'redfish',
        address: this.address,
      });
    }
    const collection = (await this.call(operation, 'GET', collectionLink)).body as Json;
    for (const member of membersOf(collection)) {
      const media = (await this.call(operation, 'GET', member)).body as Json;
      const types = Array.isArray(media.MediaTypes) ? media.MediaTypes : [];
      if (types.includes('CD') || types.includes('DVD')) return { ...media, path: member };
    }
    throw new IronflowError('UNSUPPORTED', `redfish BMC ${this.address} has virtual media but no CD or DVD device`, {
      driver: 'redfish',
      address: this.address,
    });
  }

  private async insertMedia(url: string): Promise<void> {
    const cd = await this.findVirtualCd('virtualMedia.insert');
    if (cd.Inserted === true && cd.Image === url) return;
    if (cd.Inserted === true) await this.call('virtualMedia.insert', 'POST', mediaActionPath(cd, 'EjectMedia'), {});
    await this.call('virtualMedia.insert', 'POST', mediaActionPath(cd, 'InsertMedia'), { Image: url, Inserted: true, WriteProtected: true });
    await this.readBackMedia('virtualMedia.insert', cd.path, (media) => media.Inserted === true && showsImage(media.Image, url));
  }

  private async ejectMedia(): Promise<void> {
    const cd = await this.findVirtualCd('virtualMedia.eject');
    if (cd.Inserted !== true) return;
    await this.call('virtualMedia.eject', 'POST', mediaActionPath(cd, 'EjectMedia'), {});
    await this.readBackMedia('virtualMedia.eject', cd.path, (media) => media.Inserted !== true);
  }

  /**
   * Some BMCs answer an insert or eject they never carry out: done only once the CD reads
   * back so. Failing without a status, it is transient: reliableDriver sends it again (both
   * converge: they read the CD first).
   */
  private async readBackMedia(operation: string, path: string, shows: (media: Json) => boolean): Promise<void> {
    const deadline = Date.now() + MEDIA_READ_BACK_MS;
    for (;;) {
      const media = (await this.call(operation, 'GET', path)).body as Json;
      if (shows(media)) return;
      if (Date.now() + MEDIA_POLL_MS > deadline) {
        const state = media.Inserted === true ? `inserted (${typeof media.Image === 'string' ? media.Image.split('/').pop() : 'unknown image'})` : 'empty';
        throw driverError(this.context(operation), `the BMC accepted it but did not carry it out: the virtual CD reads back ${state}`, this.secrets());
      }
      await new Promise((resolve) => setTimeout(resolve, MEDIA_POLL_MS));
    }
  }

  private async getSystem(operation: string): Promise<Json> {
    const response = await this.call(operation, 'GET', await this.resolveSystemPath(operation));
    if (typeof response.body !== 'object' || response.body === null)
      throw driverError(this.context(operation, response.status), 'the system resource is not JSON', this.secrets());
    return response.body as Json;
  }

  private async resolveSystemPath(operation: string): Promise<string> {
    if (this.systemPath) return this.systemPath;
    const collection = (await this.call(operation, 'GET', '/redfish/v1/Systems')).body as Json;
    const first = membersOf(collection)[0];
    if (!first) throw driverError(this.context(operation), 'the BMC lists no systems under /redfish/v1/Systems', this.secrets());
    this.systemPath = first;
    return first;
  }

  /** One request, authenticated; a non-2xx answer becomes DRIVER_ERROR with the BMC's message. */
  private async call(operation: string, method: string, path: string, body?: unknown): Promise<JsonResponse> {
    let response = await this.send(operation, method, path, body);
    if (response.status === 401 && this.target.auth === 'session' && this.session) {
      // The session expired on the BMC: log in again once.
      this.session = undefined;
      response = await this.send(operation, method, path, body);
    }
    if (response.status < 200 || response.status >= 300) {
      throw driverError(this.context(operation, response.status), `HTTP ${response.status}: ${messageOf(response.body)}`, this.secrets());
    }
    return response;
  }

  private async send(operation: string, method: string, path: string, body?: unknown): Promise<JsonResponse> {
    const headers = await this.authHeaders(operation);
    try {
      return await this.client.request(method, path, headers, body);
    } catch (error) {
      throw this.transportError(operation, method, error);
    }
  }

  private async authHeaders(operation: string): Promise<Record<string, string>> {
    if (this.target.auth === 'basic') {
      return { authorization: `Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.password}`).toString('base64')}` };
    }
    if (!this.session) {
      let response: JsonResponse;
      try {
        response = await this.client.request(
          'POST',
          '/redfish/v1/SessionService/Sessions',
          {},
          { UserName: this.credentials.username, Password: this.credentials.password },
        );
      } catch (error) {
        throw this.transportError(`${operation} (session login)`, 'POST', error);
      }
      const token = response.headers['x-auth-token'];
      if (response.status < 200 || response.status >= 300 || typeof token !== 'string') {
        throw driverError(
          this.context(`${operation} (session login)`, response.status),
          `HTTP ${response.status}: ${messageOf(response.body)}`,
          this.secrets(),
        );
      }
      const location = response.headers.location;
      this.session = { token, location: typeof location === 'string' ? new URL(location, this.target.address).pathname : undefined };
    }
    return { 'x-auth-token': this.session.token };
  }

  private transportError(operation: string, method: string, error: unknown): IronflowError {
    const sent = error instanceof TransportError ? error.sent : true;
    const message = error instanceof Error ? error.message : String(error);
    return driverError({ ...this.context(operation), outcomeUnknown: sent && method !== 'GET' }, message, this.secrets());
  }

  private context(operation: string, status?: number) {
    return { driver: 'redfish' as const, address: this.address, operation, ...(status !== undefined ? { status } : {}) };
  }

  private secrets(): string[] {
    return [this.credentials.password, ...(this.session ? [this.session.token] : [])];
  }
}

function powerStateOf(system: Json): PowerState {
  // A transition counts as the state it leaves, so waiting for the target state waits it out.
  const state = system.PowerState;
  return state === 'On' || state === 'PoweringOff' || state === 'Paused' ? 'on' : 'off';
}

function bootSettingOf(system: Json): BootSetting | null {
  const boot = system.Boot as Json | undefined;
  const enabled = boot?.BootSourceOverrideEnabled;
  const target = boot?.BootSourceOverrideTarget;
  if (enabled === 'Disabled' || typeof target !== 'string') return null;
  const device = bootDeviceOf[target];
  return device ? { device, persistent: enabled === 'Continuous' } : null;
}

function allowableResetTypes(system: Json): string[] | undefined {
  const reset = (system.Actions as Json | undefined)?.['#ComputerSystem.Reset'] as Json | undefined;
  const values = reset?.['ResetType@Redfish.AllowableValues'];
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : undefined;
}

function linkOf(value: unknown): string | undefined {
  const id = (value as Json | undefined)?.['@odata.id'];
  return typeof id === 'string' ? id : undefined;
}

function membersOf(collection: Json): string[] {
  const members = collection?.Members;
  return Array.isArray(members) ? members.map(linkOf).filter((v): v is string => v !== undefined) : [];
}

/** Whether the CD's Image names url: some BMCs report only the file name, some none at all. */
function showsImage(image: unknown, url: string): boolean {
  if (typeof image !== 'string' || image === '') return true;
  const fileOf = (value: string) => value.split('?')[0]?.split('/').pop() ?? '';
  return image === url || fileOf(image) === fileOf(url);
}

function mediaActionPath(media: Json & { path: string }, action: 'InsertMedia' | 'EjectMedia'): string {
  const declared = ((media.Actions as Json | undefined)?.[`#VirtualMedia.${action}`] as Json | undefined)?.target;
  return typeof declared === 'string' ? declared : `${media.path}/Actions/VirtualMedia.${action}`;
}

/** The BMC's own words: @Message.ExtendedInfo messages, then error.message, then the raw text. */
function messageOf(body: unknown): string {
  if (typeof body === 'string') return body.slice(0, 500);
  const error = (body as Json | null)?.error as Json | undefined;
  if (!error) return 'no error body';
  const parts: string[] = [];
  if (typeof error.message === 'string') parts.push(error.message);
  const extended = error['@Message.ExtendedInfo'];
  if (Array.isArray(extended)) {
    for (const info of extended as Json[]) {
      if (typeof info?.Message === 'string' && !parts.includes(info.Message)) parts.push(info.Message);
    }
  }
  if (parts.length === 0 && typeof error.code === 'string') parts.push(error.code);
  return parts.join('; ') || 'no error message';
}
