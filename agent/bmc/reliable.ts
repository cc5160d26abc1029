// Flaky BMCs are the norm: they answer 500/503 under load, drop connections, take seconds
// to answer, and now and then accept a command they do not carry out. reliableDriver wraps a
// driver so a step survives that:
// - every call is retried on a transient error (HTTP 5xx/429/408, a dropped connection, no
//   answer) with exponential backoff and jitter, until the step's deadline;
// - a change counts as done only once a read-back shows it (the power state, the boot
//   override, the system's last reset time), and is sent again when it does not show;
// - a power cycle or reset is never sent again blindly: only when the read-back proves it was
//   not carried out (LastResetTime unchanged, or still off). When nothing can prove it either
//   way (no LastResetTime, machine was on, the answer was lost), it fails with outcomeUnknown
//   and the operation ledger never sends it again.
// Every wait ends at the deadline with a DRIVER_ERROR naming what it waited for.
import { formatDuration } from '../../core/deadlines';
import { IronflowError, isIronflowError } from '../../core/errors';
import {
  driverError,
  type BmcDriver,
  type BootSetting,
  type Inspection,
  type PowerAction,
  type PowerInterface,
  type PowerState,
  type VirtualMediaInterface,
} from './driver';

export interface ReliabilityOptions {
  /** Epoch ms: nothing is sent or waited for past this (the step's own deadline, less a margin to report). */
  deadline: number;
  /** The first pause between tries; doubled per try up to maxBackoffMs, with ±50 % jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long a change the BMC accepted may take to show (BMCs apply power changes asynchronously). */
  verifyWindowMs?: number;
  /** Between read-backs. */
  pollMs?: number;
  random?: () => number;
  /** Told about every retry (the site agent logs them). */
  onRetry?: (event: { operation: string; attempt: number; reason: string; delayMs: number }) => void;
}

type PowerStatus = { power: PowerState; lastReset: string | null };

const DEFAULTS = { initialBackoffMs: 500, maxBackoffMs: 8_000, verifyWindowMs: 20_000, pollMs: 1_000 };

/** Whether trying again may help: the BMC was busy or broken for a moment, or did not answer. */
function isTransient(error: unknown): boolean {
  if (!isIronflowError(error) || error.code !== 'DRIVER_ERROR' || error.details.reason === 'bmc-deadline') return false;
  if (error.details.driver === 'ipmi') return !/password|privilege|unauthori|RAKP|not installed/i.test(String(error.details.bmcMessage ?? error.message));
  const status = error.details.status;
  return typeof status !== 'number' || status >= 500 || status === 429 || status === 408;
}

/** The request may have reached the BMC and been carried out (a lost answer, a timeout). */
const outcomeUnknown = (error: unknown): boolean => isIronflowError(error) && error.details.outcomeUnknown === true;

export function reliableDriver(driver: BmcDriver, options: ReliabilityOptions): BmcDriver {
  return new ReliableDriver(driver, { ...DEFAULTS, random: Math.random, ...options });
}

class ReliableDriver implements BmcDriver {
  readonly name: BmcDriver['name'];
  readonly address: string;
  readonly bmcId: string;
  readonly virtualMedia?: VirtualMediaInterface;
  private readonly started = Date.now();
  /** The BMC answered a call of this step (a result or an HTTP error, not a dropped connection). */
  private answered = false;

  constructor(
    private readonly inner: BmcDriver,
    private readonly options: ReliabilityOptions & typeof DEFAULTS & { random: () => number },
  ) {
    this.name = inner.name;
    this.address = inner.address;
    this.bmcId = inner.bmcId;
    const media = inner.virtualMedia;
    // Insert and eject converge on the wanted state (they read the CD first): retried as they are.
    if (media)
      this.virtualMedia = {
        insert: (url) => this.retrying('virtualMedia.insert', () => media.insert(url)),
        eject: () => this.retrying('virtualMedia.eject', () => media.eject()),
      };
  }

  readonly power: PowerInterface = {
    get: () => this.retrying('power.get', () => this.inner.power.get()),
    set: (action: PowerAction) => (action === 'on' || action === 'off' ? this.setPowerState(action) : this.resetOnce(action)),
    status: () => this.status(),
  };

  readonly management = {
    getBoot: () => this.retrying('management.getBoot', () => this.inner.management.getBoot()),
    setBoot: (setting: BootSetting) => this.setBoot(setting),
  };

  inspect(): Promise<Inspection> {
    return this.retrying('inspect', () => this.inner.inspect());
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** On or off: idempotent, so sent until the power state reads back as wanted. */
  private async setPowerState(want: 'on' | 'off'): Promise<void> {
    const operation = `power.set(${want})`;
    for (let attempt = 1; ; attempt++) {
      const failure = await this.sending(operation, () => this.inner.power.set(want));
      // Whatever the answer said, the power state decides. A refusal needs one look; an accepted or lost command gets the window.
      const state = await this.pollPower(want, failure && !outcomeUnknown(failure) ? 0 : this.options.verifyWindowMs);
      if (state === want) return;
      await this.pauseOrGiveUp(operation, attempt, failure ?? this.notCarriedOut(operation, `the power is still ${state}`));
    }
  }

  /** Cycle or reset: sent again only when the read-back proves the last send was not carried out. */
  private async resetOnce(action: 'cycle' | 'reset'): Promise<void> {
    const operation = `power.set(${action})`;
    const before = await this.status();
    // Evidence a reset happened: the BMC's LastResetTime moved, or a machine that was off is on.
    const provable = before.lastReset !== null || before.power === 'off';
    for (let attempt = 1; ; attempt++) {
      const failure = await this.sending(operation, () => this.inner.power.set(action));
      if (!provable) {
        if (!failure) return; // the BMC's word is all there is
        if (outcomeUnknown(failure)) {
          throw this.withMessage(
            failure,
            `; it may have been carried out, and this BMC reports no LastResetTime and the machine was on, so that cannot be told: not sent again (check the machine's console)`,
          );
        }
        await this.pauseOrGiveUp(operation, attempt, failure); // the BMC refused it: sent again
        continue;
      }
      let shown: boolean;
      try {
        shown = await this.resetShows(before, failure && !outcomeUnknown(failure) ? 0 : this.options.verifyWindowMs);
      } catch (error) {
        // Sent (or maybe sent) and not read back: whether it was carried out is unknown, so the ledger never resends it.
        if (!failure || outcomeUnknown(failure)) throw this.withMessage(error, `; ${operation} was sent and could not be read back`, { outcomeUnknown: true });
        throw error;
      }
      if (shown) return;
      // Read back as not carried out: the outcome is known, so the ledger may send it again on a retry.
      const evidence = before.lastReset !== null ? 'its LastResetTime did not move' : 'the power is still off';
      const notDone = failure
        ? driverError({ driver: this.name, address: this.address, operation }, `${bmcWords(failure)} (read back as not carried out: ${evidence})`, [])
        : this.notCarriedOut(operation, evidence);
      await this.pauseOrGiveUp(operation, attempt, notDone);
    }
  }

  /** A boot override: sent until the BMC reads it back. */
  private async setBoot(setting: BootSetting): Promise<void> {
    const operation = `management.setBoot(${setting.device})`;
    for (let attempt = 1; ; attempt++) {
      const failure = await this.sending(operation, () => this.inner.management.setBoot(setting));
      const now = await this.management.getBoot();
      if (now?.device === setting.device) return;
      // Some IPMI BMCs (ipmi_sim among them) report their boot flags as invalid: nothing to read back.
      if (now === null && !failure && this.inner.name === 'ipmi') return;
      await this.pauseOrGiveUp(operation, attempt, failure ?? this.notCarriedOut(operation, `it reads back ${now ? now.device : 'no override'}`));
    }
  }

  private status(): Promise<PowerStatus> {
    const read = this.inner.power.status;
    if (read) return this.retrying('power.status', () => read());
    return this.retrying('power.get', async () => ({ power: await this.inner.power.get(), lastReset: null }));
  }

  /** Sends a change once; answers the transient error it failed with (undefined when accepted), throws any other. */
  private async sending(operation: string, send: () => Promise<void>): Promise<unknown> {
    try {
      await this.beforeDeadline(operation, send(), true);
      return undefined;
    } catch (error) {
      if (!isTransient(error)) throw error;
      return error;
    }
  }

  private async pollPower(want: PowerState, windowMs: number): Promise<PowerState> {
    const until = Math.min(Date.now() + windowMs, this.options.deadline);
    for (;;) {
      const state = await this.power.get();
      if (state === want || Date.now() + this.options.pollMs > until) return state;
      await sleep(this.options.pollMs);
    }
  }

  private async resetShows(before: PowerStatus, windowMs: number): Promise<boolean> {
    const until = Math.min(Date.now() + windowMs, this.options.deadline);
    for (;;) {
      const now = await this.status();
      if ((before.lastReset !== null && now.lastReset !== null && now.lastReset !== before.lastReset) || (before.power === 'off' && now.power === 'on'))
        return true;
      if (Date.now() + this.options.pollMs > until) return false;
      await sleep(this.options.pollMs);
    }
  }

  private async retrying<T>(operation: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.beforeDeadline(operation, call(), false);
      } catch (error) {
        await this.pauseOrGiveUp(operation, attempt, error);
      }
    }
  }

  /** Waits out the backoff before the next try; throws the error when it is not transient or no time is left. */
  private async pauseOrGiveUp(operation: string, attempt: number, error: unknown): Promise<void> {
    if (!isTransient(error)) throw error;
    const base = Math.min(this.options.maxBackoffMs, this.options.initialBackoffMs * 2 ** (attempt - 1));
    const delayMs = Math.round(base * (0.5 + this.options.random()));
    if (Date.now() + delayMs >= this.options.deadline) {
      throw this.withMessage(
        error,
        `; gave up after ${attempt} ${attempt === 1 ? 'try' : 'tries'} in ${formatDuration(Date.now() - this.started)} (the step's deadline)`,
        { attempts: attempt },
      );
    }
    this.options.onRetry?.({ operation, attempt, reason: error instanceof Error ? error.message : String(error), delayMs });
    await sleep(delayMs);
  }

  /** No call outlives the deadline: one the BMC never answers fails there, saying so. */
  private beforeDeadline<T>(operation: string, call: Promise<T>, changes: boolean): Promise<T> {
    const sent = Date.now();
    const left = this.options.deadline - sent;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          const waited = formatDuration(Date.now() - this.started);
          // A BMC that answered this step before is slow or failing, not silent: say which.
          const message = this.answered
            ? `${this.name} BMC ${this.address}: the step's deadline came after ${waited}, ${formatDuration(Date.now() - sent)} into ${operation}: the BMC answers, but too slowly or with too many errors for the step's timeout`
            : `${this.name} BMC ${this.address}: no answer to ${operation} within ${waited} (the step's deadline): the BMC stopped answering`;
          reject(
            new IronflowError('DRIVER_ERROR', message, {
              driver: this.name,
              address: this.address,
              operation,
              reason: 'bmc-deadline',
              ...(changes ? { outcomeUnknown: true } : {}),
            }),
          );
        },
        Math.max(0, left),
      );
    });
    // The abandoned call ends when the driver closes (its sockets are destroyed); its failure is nobody's.
    call.then(
      () => void (this.answered = true),
      (error: unknown) => void (this.answered ||= isIronflowError(error) && typeof error.details.status === 'number'),
    );
    return Promise.race([call, expired]).finally(() => clearTimeout(timer));
  }

  private notCarriedOut(operation: string, evidence: string): IronflowError {
    return driverError({ driver: this.name, address: this.address, operation }, `the BMC accepted it but did not carry it out: ${evidence}`, []);
  }

  private withMessage(error: unknown, suffix: string, extra: Record<string, unknown> = {}): unknown {
    if (!isIronflowError(error)) return error;
    return new IronflowError(error.code, `${error.message}${suffix}`, { ...error.details, ...extra });
  }
}

/** What the BMC (or the transport) said, without the driver's prefix. */
const bmcWords = (error: unknown): string =>
  isIronflowError(error) && typeof error.details.bmcMessage === 'string' ? error.details.bmcMessage : error instanceof Error ? error.message : String(error);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
