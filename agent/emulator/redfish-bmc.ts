// Emulated BMCs speaking Redfish over HTTP, in the API shape sushy-tools serves: one HTTP
// server hosts many machines (Systems/<id>, Managers/<id>), so a fleet of hundreds costs
// one socket and a small object per machine. Each machine has its own credentials. The
// host emits what a machine's firmware would do next ('boot' to pxe/disk/cd, 'power'),
// so the machine emulator can react.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BmcFaults, noFaults, type BmcFaultSettings, type FaultDecision } from './bmc-faults';

export type EmulatedBootDevice = 'pxe' | 'disk' | 'cd';

export interface EmulatedMachineSpec {
  /** The Redfish system id (Systems/<id>, Managers/<id>). */
  id: string;
  /** The SMBIOS UUID. */
  uuid: string;
  macs: string[];
  /** IPs the BMC reports for the NICs, index-aligned with macs. */
  ips?: string[];
  username: string;
  password: string;
  powerState?: 'On' | 'Off';
  /** Where the machine boots with no override set. */
  defaultBoot?: EmulatedBootDevice;
  /** false: an older BMC that does not report LastResetTime (the default reports it). */
  reportsLastResetTime?: boolean;
}

export interface BootEvent {
  machineId: string;
  device: EmulatedBootDevice;
  /** The virtual CD's image, when it booted from cd. */
  image?: string;
}

export interface PowerEvent {
  machineId: string;
  state: 'on' | 'off';
}

interface RedfishBmcHostEvents {
  boot: [BootEvent];
  power: [PowerEvent];
}

/** One emulated machine's BMC state: plain fields, so thousands stay cheap. */
export class EmulatedMachine {
  powerState: 'On' | 'Off';
  bootTarget = 'None';
  bootEnabled: 'Disabled' | 'Once' | 'Continuous' = 'Disabled';
  mediaImage = '';
  mediaInserted = false;
  /** Requests in progress and the most ever at once: shows whether callers respect a per-BMC limit. */
  inFlight = 0;
  maxInFlight = 0;
  requests = 0;
  /**
   * The commands it carried out, in order (`reset:PowerCycle`, `boot:Pxe/Once`, `media:insert:boot.iso`, `media:eject`): tests count
   * side effects here. Injected faults are logged here too, prefixed `fault:` (`fault:503 POST
   * Systems/m1/Actions/ComputerSystem.Reset`, `fault:lost-answer …` after a command carried out,
   * `fault:ignored reset:PowerCycle` for one answered but not carried out).
   */
  readonly commands: string[] = [];
  readonly defaultBoot: EmulatedBootDevice;
  /** When the system was last reset (Redfish LastResetTime): how a caller tells whether a reset it lost the answer to happened. */
  lastResetTime = new Date(0).toISOString();
  /** Injected faults (none by default); see setFaults. */
  faults: BmcFaults | undefined;

  constructor(readonly spec: EmulatedMachineSpec) {
    this.powerState = spec.powerState ?? 'Off';
    this.defaultBoot = spec.defaultBoot ?? 'disk';
  }
}

const resetTypes = ['On', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'Nmi', 'ForceOn', 'PowerCycle'];
const bootTargets = ['None', 'Pxe', 'Hdd', 'Cd', 'BiosSetup'];
const bootEnabledValues = ['Disabled', 'Once', 'Continuous'];
const maxRequestBytes = 64 * 1024;

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly messageId = 'Base.1.0.GeneralError',
  ) {
    super(message);
  }
}

export class RedfishBmcHost extends EventEmitter<RedfishBmcHostEvents> {
  private readonly machines = new Map<string, EmulatedMachine>();
  private readonly sessions = new Map<string, { id: string; username: string; password: string }>();
  private readonly server: http.Server;
  private port = 0;
  /** The machine whose current (synchronous) command is answered but not carried out (an injected fault). */
  private ignoring: EmulatedMachine | undefined;

  private constructor(
    private readonly host: string,
    /** Added to every answer, to emulate a slow BMC. */
    private readonly responseDelayMs: number,
  ) {
    super();
    this.server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => void this.handle(req, res));
  }

  /** Starts the shared HTTP server; port 0 picks a free one. */
  static async start(options: { host?: string; port?: number; responseDelayMs?: number } = {}): Promise<RedfishBmcHost> {
    const bmcHost = new RedfishBmcHost(options.host ?? '127.0.0.1', options.responseDelayMs ?? 0);
    await new Promise<void>((resolve, reject) => {
      bmcHost.server.once('error', reject);
      bmcHost.server.listen(options.port ?? 0, bmcHost.host, () => resolve());
    });
    bmcHost.port = (bmcHost.server.address() as AddressInfo).port;
    return bmcHost;
  }

  /** The address a Redfish driver dials (with the machine's id as systemId). */
  get url(): string {
    return `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  add(spec: EmulatedMachineSpec): EmulatedMachine {
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(spec.id)) throw new RangeError(`machine id ${spec.id} must be [A-Za-z0-9._-]{1,128}`);
    if (this.machines.has(spec.id)) throw new RangeError(`machine ${spec.id} already exists`);
    const machine = new EmulatedMachine(spec);
    this.machines.set(spec.id, machine);
    return machine;
  }

  get(id: string): EmulatedMachine | undefined {
    return this.machines.get(id);
  }

  /** Makes one machine's BMC flaky (see agent/emulator/bmc-faults.ts); null: reliable again. */
  setFaults(id: string, settings: BmcFaultSettings | null): void {
    const machine = this.machines.get(id);
    if (!machine) throw new RangeError(`machine ${id} does not exist`);
    machine.faults = settings ? new BmcFaults(settings, id) : undefined;
  }

  remove(id: string): void {
    this.machines.delete(id);
  }

  get size(): number {
    return this.machines.size;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://bmc');
    const parts = url.pathname.replace(/\/+$/, '').split('/').filter(Boolean).map(safeDecode);
    const machine = parts[3] !== undefined ? this.machines.get(parts[3]) : undefined;
    if (machine) {
      machine.requests++;
      machine.maxInFlight = Math.max(machine.maxInFlight, ++machine.inFlight);
      res.once('close', () => machine.inFlight--);
    }
    try {
      const body = await readBody(req);
      const method = req.method ?? 'GET';
      const fault: FaultDecision = machine?.faults?.next(method === 'POST' || method === 'PATCH') ?? noFaults;
      const heldReset = !fault.hang && method === 'POST' && parts.at(-1) === 'ComputerSystem.Reset' && machine?.faults?.holdsReset() === true;
      if (heldReset) machine?.commands.push(`fault:held ${method} ${parts.slice(2).join('/')}`);
      // Held open with no answer, nothing carried out, until the caller gives up.
      if (fault.hang || heldReset) return void (await new Promise((resolve) => res.once('close', resolve)));
      const delayMs = this.responseDelayMs + fault.delayMs;
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const request = `${method} ${parts.slice(2).join('/')}`;
      if (machine && (fault.error === '500' || fault.error === '503')) {
        machine.commands.push(`fault:${fault.error} ${request}`);
        throw new HttpProblem(Number(fault.error), fault.error === '503' ? 'The service is temporarily unavailable' : 'Internal error (injected)');
      }
      if (machine && fault.error === 'reset') {
        machine.commands.push(`fault:reset ${request}`);
        return void req.socket.destroy();
      }
      this.ignoring = fault.ignore ? machine : undefined;
      const answer = this.route(method, parts, body, req.headers);
      this.ignoring = undefined;
      if (machine && fault.error === 'lost-answer') {
        machine.commands.push(`fault:lost-answer ${request}`);
        return void req.socket.destroy();
      }
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
    } catch (error) {
      this.ignoring = undefined;
      const problem = error instanceof HttpProblem ? error : new HttpProblem(500, error instanceof Error ? error.message : String(error));
      res.writeHead(problem.status, { 'content-type': 'application/json', ...(problem.status === 401 ? { 'www-authenticate': 'Basic realm="Redfish"' } : {}) });
      res.end(JSON.stringify(errorBody(problem)));
    }
  }

  private route(method: string, parts: string[], body: Record<string, unknown> | null, headers: http.IncomingHttpHeaders): Answer {
    const [r, v1, collection, id, sub, subId, action, actionName] = parts;
    if (r !== 'redfish' || v1 !== 'v1') throw new HttpProblem(404, `unknown resource ${parts.join('/')}`, 'Base.1.0.ResourceMissingAtURI');
    if (collection === undefined) return ok(serviceRoot());
    if (collection === 'SessionService') return this.sessionRoute(method, id, sub, body, headers);

    const caller = this.authenticate(headers, id !== undefined ? this.machines.get(id) : undefined);
    const visible = (machine: EmulatedMachine) => machine.spec.username === caller.username && safeEqual(machine.spec.password, caller.password);
    if (collection === 'Systems' || collection === 'Managers') {
      if (id === undefined) {
        if (method !== 'GET') throw methodNotAllowed(method);
        return ok(
          collectionOf(
            collection,
            [...this.machines.values()].filter(visible).map((m) => m.spec.id),
          ),
        );
      }
      const machine = this.machines.get(id);
      if (!machine || !visible(machine)) throw new HttpProblem(404, `System ${id} was not found`, 'Base.1.0.ResourceMissingAtURI');
      if (collection === 'Managers') {
        if (sub === undefined) return ok(managerOf(machine));
        if (sub === 'VirtualMedia') return this.mediaRoute(machine, method, subId, action, actionName, body, `/redfish/v1/Managers/${id}/VirtualMedia`);
      } else {
        if (sub === undefined) {
          if (method === 'GET') return ok(systemOf(machine));
          if (method === 'PATCH') return this.patchSystem(machine, body);
          throw methodNotAllowed(method);
        }
        if (sub === 'Actions' && subId === 'ComputerSystem.Reset' && method === 'POST') return this.reset(machine, body);
        if (sub === 'EthernetInterfaces') return ok(subId === undefined ? nicCollectionOf(machine) : nicOf(machine, subId));
        if (sub === 'VirtualMedia') return this.mediaRoute(machine, method, subId, action, actionName, body, `/redfish/v1/Systems/${id}/VirtualMedia`);
      }
    }
    throw new HttpProblem(404, `unknown resource /${parts.join('/')}`, 'Base.1.0.ResourceMissingAtURI');
  }

  /** Basic or session credentials; checked against the addressed machine first, so a request costs O(1). */
  private authenticate(headers: http.IncomingHttpHeaders, addressed: EmulatedMachine | undefined): { username: string; password: string } {
    const token = headers['x-auth-token'];
    if (typeof token === 'string') {
      const session = this.sessions.get(token);
      if (session) return session;
      throw new HttpProblem(401, 'Invalid or expired session token', 'Base.1.0.NoValidSession');
    }
    const match = /^Basic\s+(.+)$/i.exec(headers.authorization ?? '');
    if (match?.[1]) {
      const decoded = Buffer.from(match[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) {
        const credentials = { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
        const matchesAddressed =
          addressed !== undefined && addressed.spec.username === credentials.username && safeEqual(addressed.spec.password, credentials.password);
        if (matchesAddressed || this.knows(credentials)) return credentials;
      }
    }
    throw new HttpProblem(401, 'Incorrect username or password', 'Base.1.0.InsufficientPrivilege');
  }

  private knows(credentials: { username: string; password: string }): boolean {
    for (const machine of this.machines.values()) {
      if (machine.spec.username === credentials.username && safeEqual(machine.spec.password, credentials.password)) return true;
    }
    return false;
  }

  private sessionRoute(
    method: string,
    collection: string | undefined,
    sessionId: string | undefined,
    body: Record<string, unknown> | null,
    headers: http.IncomingHttpHeaders,
  ): Answer {
    if (collection === undefined)
      return ok({ '@odata.id': '/redfish/v1/SessionService', Id: 'SessionService', Sessions: { '@odata.id': '/redfish/v1/SessionService/Sessions' } });
    if (collection !== 'Sessions') throw new HttpProblem(404, `unknown resource SessionService/${collection}`, 'Base.1.0.ResourceMissingAtURI');
    if (method === 'POST' && sessionId === undefined) {
      const username = body?.UserName;
      const password = body?.Password;
      if (typeof username !== 'string' || typeof password !== 'string')
        throw new HttpProblem(400, 'UserName and Password are required', 'Base.1.0.PropertyMissing');
      if (!this.knows({ username, password })) throw new HttpProblem(401, 'Incorrect username or password', 'Base.1.0.InsufficientPrivilege');
      const token = randomBytes(24).toString('base64url');
      const id = randomBytes(8).toString('hex');
      this.sessions.set(token, { id, username, password });
      const location = `/redfish/v1/SessionService/Sessions/${id}`;
      return { status: 201, headers: { 'x-auth-token': token, location }, body: { '@odata.id': location, Id: id, UserName: username } };
    }
    if (method === 'DELETE' && sessionId !== undefined) {
      const token = headers['x-auth-token'];
      const session = typeof token === 'string' ? this.sessions.get(token) : undefined;
      if (!session || session.id !== sessionId) throw new HttpProblem(401, 'Invalid or expired session token', 'Base.1.0.NoValidSession');
      if (typeof token === 'string') this.sessions.delete(token);
      return { status: 204 };
    }
    throw methodNotAllowed(method);
  }

  private patchSystem(machine: EmulatedMachine, body: Record<string, unknown> | null): Answer {
    const boot = body?.Boot as Record<string, unknown> | undefined;
    if (!boot || typeof boot !== 'object') throw new HttpProblem(400, 'PATCH only works for the Boot element', 'Base.1.0.PropertyUnknown');
    const target = boot.BootSourceOverrideTarget;
    const enabled = boot.BootSourceOverrideEnabled;
    if (target !== undefined && (typeof target !== 'string' || !bootTargets.includes(target))) throw notInList(String(target), 'BootSourceOverrideTarget');
    if (enabled !== undefined && (typeof enabled !== 'string' || !bootEnabledValues.includes(enabled)))
      throw notInList(String(enabled), 'BootSourceOverrideEnabled');
    if (this.ignoring === machine) return this.ignored(machine, `boot:${String(target ?? machine.bootTarget)}/${String(enabled ?? 'Once')}`);
    if (typeof target === 'string') machine.bootTarget = target;
    if (typeof enabled === 'string') machine.bootEnabled = enabled as EmulatedMachine['bootEnabled'];
    else if (typeof target === 'string' && machine.bootEnabled === 'Disabled') machine.bootEnabled = 'Once';
    machine.commands.push(`boot:${machine.bootTarget}/${machine.bootEnabled}`);
    return { status: 204 };
  }

  private reset(machine: EmulatedMachine, body: Record<string, unknown> | null): Answer {
    const type = body?.ResetType;
    if (typeof type !== 'string' || !resetTypes.includes(type)) throw notInList(String(type), 'ResetType');
    if (this.ignoring === machine) return this.ignored(machine, `reset:${type}`);
    const wasOn = machine.powerState === 'On';
    machine.commands.push(`reset:${type}`);
    if (type !== 'Nmi') machine.lastResetTime = nextResetTime(machine.lastResetTime);
    switch (type) {
      case 'On':
      case 'ForceOn':
        if (!wasOn) this.powerOn(machine);
        break;
      case 'ForceOff':
      case 'GracefulShutdown':
        if (wasOn) this.powerOff(machine);
        break;
      case 'GracefulRestart':
      case 'ForceRestart':
      case 'PowerCycle':
        if (wasOn) this.powerOff(machine);
        this.powerOn(machine);
        break;
      case 'Nmi':
        break;
    }
    return { status: 204 };
  }

  /** A buggy BMC: the command is answered as done and forgotten. */
  private ignored(machine: EmulatedMachine, command: string): Answer {
    machine.commands.push(`fault:ignored ${command}`);
    return { status: 204 };
  }

  private powerOff(machine: EmulatedMachine): void {
    machine.powerState = 'Off';
    this.emit('power', { machineId: machine.spec.id, state: 'off' });
  }

  /** Firmware: take the override (once or always), else the default; a cd boot needs media. */
  private powerOn(machine: EmulatedMachine): void {
    machine.powerState = 'On';
    this.emit('power', { machineId: machine.spec.id, state: 'on' });
    let device = machine.defaultBoot;
    if (machine.bootEnabled !== 'Disabled' && machine.bootTarget !== 'None') {
      const override = ({ Pxe: 'pxe', Hdd: 'disk', Cd: 'cd' } as Record<string, EmulatedBootDevice>)[machine.bootTarget];
      if (override) device = override;
      if (machine.bootEnabled === 'Once') machine.bootEnabled = 'Disabled';
    }
    if (device === 'cd' && !machine.mediaInserted) device = machine.defaultBoot === 'cd' ? 'disk' : machine.defaultBoot;
    this.emit('boot', { machineId: machine.spec.id, device, ...(device === 'cd' ? { image: machine.mediaImage } : {}) });
  }

  private mediaRoute(
    machine: EmulatedMachine,
    method: string,
    device: string | undefined,
    actions: string | undefined,
    actionName: string | undefined,
    body: Record<string, unknown> | null,
    base: string,
  ): Answer {
    if (device === undefined) return ok(collectionOf(null, [`${base}/Cd`], base, 'VirtualMediaCollection'));
    if (device !== 'Cd') throw new HttpProblem(404, `Virtual media device ${device} was not found`, 'Base.1.0.ResourceMissingAtURI');
    if (actions === undefined && method === 'GET') return ok(mediaOf(machine, base));
    if (actions === 'Actions' && method === 'POST' && actionName === 'VirtualMedia.InsertMedia') {
      const image = body?.Image;
      if (typeof image !== 'string' || !/^https?:\/\//.test(image))
        throw new HttpProblem(400, 'Image must be an http(s) URL', 'Base.1.0.PropertyValueFormatError');
      // Logged by the image's file name only: a cache URL's path carries its grant.
      const command = `media:insert:${mediaNameOf(image)}`;
      if (this.ignoring === machine) return this.ignored(machine, command);
      machine.mediaImage = image;
      machine.mediaInserted = body?.Inserted !== false;
      machine.commands.push(command);
      return { status: 204 };
    }
    if (actions === 'Actions' && method === 'POST' && actionName === 'VirtualMedia.EjectMedia') {
      if (this.ignoring === machine) return this.ignored(machine, 'media:eject');
      machine.mediaImage = '';
      machine.mediaInserted = false;
      machine.commands.push('media:eject');
      return { status: 204 };
    }
    throw methodNotAllowed(method);
  }
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

const ok = (body: unknown): Answer => ({ status: 200, body });
const methodNotAllowed = (method: string) => new HttpProblem(405, `${method} is not allowed on this resource`, 'Base.1.0.OperationNotAllowed');
const notInList = (value: string, property: string) =>
  new HttpProblem(400, `The value ${value} for the property ${property} is not in the list of acceptable values.`, 'Base.1.0.PropertyValueNotInList');

/** Now, or just after the previous reset when the clock did not move (two resets in one millisecond). */
function nextResetTime(previous: string): string {
  const now = Date.now();
  const last = Date.parse(previous);
  return new Date(now > last ? now : last + 1).toISOString();
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function readBody(req: http.IncomingMessage): Promise<Record<string, unknown> | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxRequestBytes) {
        reject(new HttpProblem(413, 'request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (size === 0) return resolve(null);
      try {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        resolve(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null);
      } catch {
        reject(new HttpProblem(400, 'The request body is not valid JSON', 'Base.1.0.MalformedJSON'));
      }
    });
    req.on('error', reject);
  });
}

function errorBody(problem: HttpProblem) {
  return {
    error: {
      code: 'Base.1.0.GeneralError',
      message: 'A general error has occurred. See ExtendedInfo for more information.',
      '@Message.ExtendedInfo': [{ '@odata.type': '#Message.v1_0_0.Message', MessageId: problem.messageId, Message: problem.message, Severity: 'Warning' }],
    },
  };
}

function serviceRoot() {
  return {
    '@odata.type': '#ServiceRoot.v1_5_0.ServiceRoot',
    '@odata.id': '/redfish/v1/',
    Id: 'IronflowEmulator',
    Name: 'Ironflow emulated BMC',
    RedfishVersion: '1.5.0',
    Systems: { '@odata.id': '/redfish/v1/Systems' },
    Managers: { '@odata.id': '/redfish/v1/Managers' },
    SessionService: { '@odata.id': '/redfish/v1/SessionService' },
    Links: { Sessions: { '@odata.id': '/redfish/v1/SessionService/Sessions' } },
  };
}

function collectionOf(
  kind: 'Systems' | 'Managers' | null,
  members: string[],
  base = `/redfish/v1/${kind}`,
  type = kind === 'Systems' ? 'ComputerSystemCollection' : 'ManagerCollection',
) {
  return {
    '@odata.type': `#${type}.${type}`,
    '@odata.id': base,
    'Members@odata.count': members.length,
    Members: members.map((member) => ({ '@odata.id': member.startsWith('/') ? member : `${base}/${member}` })),
  };
}

function systemOf(machine: EmulatedMachine) {
  const id = machine.spec.id;
  const base = `/redfish/v1/Systems/${id}`;
  return {
    '@odata.type': '#ComputerSystem.v1_13_0.ComputerSystem',
    '@odata.id': base,
    Id: id,
    Name: id,
    UUID: machine.spec.uuid,
    PowerState: machine.powerState,
    ...(machine.spec.reportsLastResetTime === false ? {} : { LastResetTime: machine.lastResetTime }),
    Boot: {
      BootSourceOverrideEnabled: machine.bootEnabled,
      BootSourceOverrideTarget: machine.bootTarget,
      'BootSourceOverrideTarget@Redfish.AllowableValues': bootTargets,
    },
    EthernetInterfaces: { '@odata.id': `${base}/EthernetInterfaces` },
    VirtualMedia: { '@odata.id': `${base}/VirtualMedia` },
    Links: { ManagedBy: [{ '@odata.id': `/redfish/v1/Managers/${id}` }] },
    Actions: { '#ComputerSystem.Reset': { target: `${base}/Actions/ComputerSystem.Reset`, 'ResetType@Redfish.AllowableValues': resetTypes } },
  };
}

function managerOf(machine: EmulatedMachine) {
  const base = `/redfish/v1/Managers/${machine.spec.id}`;
  return {
    '@odata.type': '#Manager.v1_3_1.Manager',
    '@odata.id': base,
    Id: machine.spec.id,
    ManagerType: 'BMC',
    VirtualMedia: { '@odata.id': `${base}/VirtualMedia` },
    Links: { ManagerForServers: [{ '@odata.id': `/redfish/v1/Systems/${machine.spec.id}` }] },
  };
}

function nicId(mac: string): string {
  return mac.toLowerCase().replaceAll(':', '');
}

function nicCollectionOf(machine: EmulatedMachine) {
  const base = `/redfish/v1/Systems/${machine.spec.id}/EthernetInterfaces`;
  return collectionOf(
    null,
    machine.spec.macs.map((mac) => `${base}/${nicId(mac)}`),
    base,
    'EthernetInterfaceCollection',
  );
}

function nicOf(machine: EmulatedMachine, id: string) {
  const index = machine.spec.macs.findIndex((mac) => nicId(mac) === id);
  const mac = machine.spec.macs[index];
  if (mac === undefined) throw new HttpProblem(404, `EthernetInterface ${id} was not found`, 'Base.1.0.ResourceMissingAtURI');
  const ip = machine.spec.ips?.[index];
  return {
    '@odata.type': '#EthernetInterface.v1_4_0.EthernetInterface',
    '@odata.id': `/redfish/v1/Systems/${machine.spec.id}/EthernetInterfaces/${id}`,
    Id: id,
    Status: { State: 'Enabled', Health: 'OK' },
    PermanentMACAddress: mac,
    MACAddress: mac,
    IPv4Addresses: ip ? [{ Address: ip, AddressOrigin: 'DHCP' }] : [],
  };
}

/** The last path segment of a virtual media URL (`boot.iso`, a cached copy's digest). */
function mediaNameOf(image: string): string {
  return new URL(image).pathname.split('/').filter(Boolean).pop() ?? '';
}

function mediaOf(machine: EmulatedMachine, base: string) {
  return {
    '@odata.type': '#VirtualMedia.v1_4_0.VirtualMedia',
    '@odata.id': `${base}/Cd`,
    Id: 'Cd',
    Name: 'Virtual CD',
    MediaTypes: ['CD', 'DVD'],
    Image: machine.mediaImage,
    ConnectedVia: machine.mediaInserted ? 'URI' : 'NotConnected',
    Inserted: machine.mediaInserted,
    WriteProtected: true,
    Actions: {
      '#VirtualMedia.EjectMedia': { target: `${base}/Cd/Actions/VirtualMedia.EjectMedia` },
      '#VirtualMedia.InsertMedia': { target: `${base}/Cd/Actions/VirtualMedia.InsertMedia` },
    },
  };
}
