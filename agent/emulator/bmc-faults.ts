// Fault injection for one emulated BMC: real BMCs answer 500/503 under load, drop
// connections, take seconds to answer, accept a command and then not carry it out, or stop
// answering altogether. Each machine's BMC draws its faults from its own seeded generator, so
// a run with the same seed and the same request sequence injects the same faults. The
// decisions are pure; redfish-bmc.ts applies them and logs each in the machine's command log.

type BmcErrorKind =
  /** HTTP 500, nothing carried out. */
  | '500'
  /** HTTP 503 (busy), nothing carried out. */
  | '503'
  /** The connection is reset before the request is carried out. */
  | 'reset'
  /** The request is carried out, then the connection is reset: the caller never learns it was. */
  | 'lost-answer';

const bmcErrorKinds: readonly BmcErrorKind[] = ['500', '503', 'reset', 'lost-answer'];

export interface BmcFaultSettings {
  /** Share of requests (0 to 1) that fail, each in one of errorKinds. */
  errorRate?: number;
  /** How failing requests fail, drawn evenly (default: all four). */
  errorKinds?: readonly BmcErrorKind[];
  /** The errors hit only changing requests (POST, PATCH); reads always answer. */
  commandsOnly?: boolean;
  /** Share of changing requests (power resets, boot override) answered 204 but not carried out. */
  ignoreRate?: number;
  /** Added to every answer (ms). */
  latencyMs?: number;
  /** Up to this much more, drawn evenly per request (ms). */
  jitterMs?: number;
  /** The BMC stops answering: requests are held open with no answer until the caller gives up. */
  unresponsive?: boolean;
  /** The first this many power resets are held open with no answer until the caller gives up, and not carried out. */
  holdResets?: number;
  /** Seeds this BMC's generator (default 1); the machine id is mixed in, so machines differ. */
  seed?: number;
}

/** What happens to one request. */
export interface FaultDecision {
  delayMs: number;
  /** Held open forever (an unresponsive BMC). */
  hang: boolean;
  error: BmcErrorKind | null;
  /** A changing request answered as done but not carried out. */
  ignore: boolean;
}

export const noFaults: FaultDecision = { delayMs: 0, hang: false, error: null, ignore: false };

/** mulberry32: small, fast, and good enough to spread faults evenly. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hashOf(text: string): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash >>> 0;
}

function share(value: number | undefined, name: string): number {
  const v = value ?? 0;
  if (!(v >= 0 && v <= 1)) throw new RangeError(`${name} must be between 0 and 1, not ${value}`);
  return v;
}

export class BmcFaults {
  private readonly random: () => number;
  private readonly errorRate: number;
  private readonly ignoreRate: number;
  private readonly kinds: readonly BmcErrorKind[];
  private resetsHeld = 0;

  constructor(
    readonly settings: BmcFaultSettings,
    machineId: string,
  ) {
    this.errorRate = share(settings.errorRate, 'errorRate');
    this.ignoreRate = share(settings.ignoreRate, 'ignoreRate');
    this.kinds = settings.errorKinds && settings.errorKinds.length > 0 ? settings.errorKinds : bmcErrorKinds;
    if ((settings.latencyMs ?? 0) < 0 || (settings.jitterMs ?? 0) < 0) throw new RangeError('latencyMs and jitterMs must not be negative');
    this.random = generator((settings.seed ?? 1) ^ hashOf(machineId));
  }

  /** Whether this power reset is one of the first `holdResets`, held with no answer. */
  holdsReset(): boolean {
    if (this.resetsHeld >= (this.settings.holdResets ?? 0)) return false;
    this.resetsHeld++;
    return true;
  }

  /** Draws the fate of the next request; `changing`: a command that changes the machine. */
  next(changing: boolean): FaultDecision {
    if (this.settings.unresponsive) return { ...noFaults, hang: true };
    // Every draw is made whatever the outcome, so one request's fate does not shift the next one's.
    const delay = this.random();
    const fails = this.random() < this.errorRate && (changing || !this.settings.commandsOnly);
    const kind = this.kinds[Math.floor(this.random() * this.kinds.length)] as BmcErrorKind;
    const ignored = this.random() < this.ignoreRate;
    return {
      delayMs: (this.settings.latencyMs ?? 0) + Math.floor(delay * (this.settings.jitterMs ?? 0)),
      hang: false,
      error: fails ? kind : null,
      ignore: !fails && changing && ignored,
    };
  }
}
