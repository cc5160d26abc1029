// An agent's Temporal worker: activities only, on its own task queue, registering exactly
// the step kinds its mode runs, and the question what became of one (step-outcomes.ts).
// Anything else sent to the queue hits the `default` handler, which refuses it at once,
// without retries (UNSUPPORTED) — Temporal's own answer for an unregistered activity would be
// retried until the step's deadline.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { AgentTemporal } from '../../core/schemas/join';
import { connectThroughGateway, type AgentCredentials } from './gateway-connection';
import { MIN_BEAT_MS } from './heartbeating';
import { withStepOutcomes } from './step-outcomes';

export type AgentActivity = (...args: never[]) => Promise<unknown>;

interface RestrictedWorkerOptions {
  /** The agent's mode, as the refusal names it. */
  mode: 'site' | 'ramdisk' | 'node';
  kinds: readonly string[];
  /** One activity per kind, already wrapped (failure reporting, heartbeats). */
  activities: Record<string, AgentActivity>;
  temporal: AgentTemporal;
  /** The agent's certificate chain and key: the gateway knows the agent by them. */
  credentials: AgentCredentials;
  shutdownGraceTime?: string;
  maxConcurrentActivityTaskExecutions?: number;
}

export interface RestrictedWorker {
  stop(): Promise<void>;
}

export async function startRestrictedWorker(options: RestrictedWorkerOptions): Promise<RestrictedWorker> {
  const kinds: Record<string, AgentActivity> = {};
  for (const kind of options.kinds) {
    const activity = options.activities[kind];
    if (!activity) throw new Error(`${options.mode} agent: no activity for step kind ${kind}`);
    kinds[kind] = activity;
  }
  const activities: Record<string, AgentActivity> = {
    // Each step's outcome is kept, so a workflow whose step's answer was lost can ask for it.
    ...withStepOutcomes(kinds),
    default: async () => {
      throw ApplicationFailure.create({
        type: 'UNSUPPORTED',
        message: `${Context.current().info.activityType} is not a ${options.mode} step kind; a ${options.mode} agent runs only ${options.kinds.join(', ')}`,
        nonRetryable: true,
      });
    },
  };
  const connection = await connectThroughGateway(options.temporal, options.credentials);
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection,
      namespace: options.temporal.namespace,
      taskQueue: options.temporal.taskQueue,
      activities,
      shutdownGraceTime: options.shutdownGraceTime ?? '2s',
      // Each beat goes out when the step makes it, every half heartbeat timeout (heartbeating.ts).
      maxHeartbeatThrottleInterval: MIN_BEAT_MS,
      // A machine's agent (ramdisk, node) is given its steps one after another: one long poll
      // is enough, where the SDK keeps up to 10 open. Temporal caps a namespace's concurrent
      // polls (frontend.namespaceCount), so a fleet's agents must hold one each: at ten each,
      // 300 deployed machines took every poll and the site agent's were refused.
      // (The SDK documents maxConcurrentActivityTaskPolls but no longer reads it.)
      ...(options.mode === 'site' ? {} : { activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 1 } }),
      ...(options.maxConcurrentActivityTaskExecutions ? { maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions } : {}),
    });
  } catch (error) {
    await connection.close();
    throw error;
  }
  const running = worker.run().finally(() => connection.close());
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
    },
  };
}
