// Which identity polled each activity task: a completion or heartbeat must come from the
// identity that polled the task, so one agent cannot finish (or forge the result of)
// another's step. Held in memory and bounded: after a gateway restart the tokens of steps
// in flight are unknown, their completions are refused, and Temporal retries the steps
// (their heartbeat or start-to-close timeout notices).
import { RecentCache } from '../core/recent-cache';

const MAX_BOUND_TASKS = 100_000;
/** Longer than any step's start-to-close timeout. */
const BINDING_TTL_MS = 48 * 3600_000;

/** Who polled a task, which step it is, and when it was handed out (for the step's duration). */
interface TaskBinding {
  identity: string;
  step: string;
  boundAt: number;
  expiresAt: number;
}

export class TaskTokenBindings {
  // Age order: lookups only peek, so past capacity the oldest binding goes first.
  private readonly owners: RecentCache<string, TaskBinding>;

  constructor(
    private readonly now: () => number = Date.now,
    capacity = MAX_BOUND_TASKS,
  ) {
    this.owners = new RecentCache(capacity);
  }

  bind(taskToken: Uint8Array, identity: string, step: string): void {
    const key = Buffer.from(taskToken).toString('base64');
    const now = this.now();
    this.owners.set(key, { identity, step, boundAt: now, expiresAt: now + BINDING_TTL_MS });
  }

  ownerOf(taskToken: Uint8Array): string | undefined {
    const key = Buffer.from(taskToken).toString('base64');
    const owner = this.owners.peek(key);
    if (!owner) return undefined;
    if (owner.expiresAt <= this.now()) {
      this.owners.delete(key);
      return undefined;
    }
    return owner.identity;
  }

  /** Forgets a finished task, returning what was bound to it. */
  release(taskToken: Uint8Array): TaskBinding | undefined {
    const key = Buffer.from(taskToken).toString('base64');
    const binding = this.owners.peek(key);
    this.owners.delete(key);
    return binding;
  }

  get size(): number {
    return this.owners.size;
  }
}
