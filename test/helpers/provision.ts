// Test support for provision workflows: the machine side emulated (activity-only workers
// on agents' queues, standing in for the site/ramdisk agents of a later issue), agent
// sessions kept fresh in the database, and a ledger of side effects in a file.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { NativeConnection, Worker } from '@temporalio/worker';
import { ramdiskQueue } from '../../core/agent-queues';
import type { IronflowConfig } from '../../services/config';
import type { Db } from '../../services/db';
import type { StepInput } from '../../core/plan';
import type { AgentActivity } from '../../agent/common/restricted-worker';
import { sealedDataConverter } from '../../services/sealing';
import { installWorkerRuntime } from '../../worker/runtime';

export type MachineActivity = (input: StepInput) => Promise<unknown>;

export interface EmulatedAgent {
  taskQueue: string;
  stop(): Promise<void>;
}

/**
 * An activity-only worker on an agent's queue, serving emulated machine-side steps. It polls
 * the frontend directly, so it opens and seals payloads with the control plane's history
 * codec (`config`'s), as the agent gateway does for a real agent.
 */
export async function startEmulatedAgent(config: IronflowConfig, taskQueue: string, activities: Record<string, AgentActivity>): Promise<EmulatedAgent> {
  installWorkerRuntime();
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue,
    activities,
    dataConverter: sealedDataConverter(config),
    // Heartbeats go out at once, so a cancelled step hears of it quickly (real agents pick their own).
    shutdownGraceTime: '1s',
    maxHeartbeatThrottleInterval: '200ms',
    defaultHeartbeatThrottleInterval: '200ms',
  });
  const done = worker.run().finally(() => connection.close());
  return {
    taskQueue,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

export interface LedgerEntry {
  step: string;
  use: string;
  event: 'start' | 'done' | 'fail' | 'cancelled';
  attempt?: number;
  queue?: string;
  data?: unknown;
}

/** Side effects, one JSON line each, appended by the emulated activities (any process). */
export class Ledger {
  constructor(readonly file: string) {}
  append(entry: LedgerEntry): void {
    appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
  }
  entries(): LedgerEntry[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LedgerEntry);
  }
  count(step: string, event: LedgerEntry['event']): number {
    return this.entries().filter((e) => e.step === step && e.event === event).length;
  }
}

/**
 * The queue of a machine's emulated ramdisk. A real ramdisk's queue is named by the tag of the
 * key it made at boot; an emulated one has no key, so it takes a fixed tag.
 */
export const emulatedRamdiskQueue = (nodeId: string): string => ramdiskQueue(nodeId, '00000000000000ed');

/**
 * A machine's ramdisk, emulated: a worker on its queue, and its session kept fresh as its
 * heartbeats would (a run that did not boot it finds its queue there).
 */
export async function startEmulatedRamdisk(
  config: IronflowConfig,
  db: Db,
  machine: { nodeId: string; siteId: string },
  activities: Record<string, MachineActivity>,
): Promise<EmulatedAgent> {
  const taskQueue = emulatedRamdiskQueue(machine.nodeId);
  const agent = await startEmulatedAgent(config, taskQueue, activities);
  const session = keepSessions(db, [{ ...machine, role: 'ramdisk', taskQueue }]);
  return {
    taskQueue,
    async stop() {
      await session.stop();
      await agent.stop();
    },
  };
}

/** The queue of the agent a machine runs, as its session names it (each boot's ramdisk serves one of its own). */
export async function sessionQueue(db: Db, nodeId: string): Promise<string> {
  return (await db.agentSession.findUniqueOrThrow({ where: { nodeId } })).taskQueue;
}

export async function createNode(db: Db, input: { nodeId: string; siteId: string; tenantId?: string }): Promise<void> {
  await db.node.create({ data: { id: input.nodeId, tenantId: input.tenantId ?? 'root', siteId: input.siteId, role: 'ramdisk', provisionState: 'inspecting' } });
}

/** Keeps site agents' sessions fresh, as their heartbeats would. */
export function keepSessions(db: Db, sessions: Array<{ nodeId: string; siteId: string; role: string; taskQueue: string }>): { stop(): Promise<void> } {
  const beat = async () => {
    for (const s of sessions) {
      await db.agentSession.upsert({ where: { nodeId: s.nodeId }, create: { ...s, lastSeenAt: new Date() }, update: { lastSeenAt: new Date() } });
    }
  };
  let running = beat();
  const timer = setInterval(() => {
    running = running.then(beat, beat);
  }, 2000);
  return {
    async stop() {
      clearInterval(timer);
      await running.catch(() => undefined);
    },
  };
}

export async function until<T>(fn: () => Promise<T> | T, done: (v: T) => boolean, ms = 20_000, what = 'condition'): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await fn();
    if (done(value)) return value;
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
