// The calls an agent's activity worker makes, and what each may carry. Everything else a
// Temporal client could ask (list, describe, history, signal, start, terminate, another
// queue, workflow tasks) is absent here, so the gateway refuses it. Each admitted request
// is re-encoded with the identity the certificate proves, so histories name the real agent.
import type { PayloadCodec } from '@temporalio/common';
import {
  visit,
  walkPollActivityTaskQueueResponse,
  walkRecordActivityTaskHeartbeatRequest,
  walkRespondActivityTaskCanceledRequest,
  walkRespondActivityTaskCompletedRequest,
  walkRespondActivityTaskFailedRequest,
} from '@temporalio/common/lib/internal-non-workflow';
import type { GatewayAgent } from './agent-identities';
import { agentStepSeconds } from '../services/metrics/registry';
import { temporal } from '../services/temporal-proto';
import type { TaskTokenBindings } from './task-token-bindings';

const ws = temporal.api.workflowservice.v1;

export interface CallContext {
  agent: GatewayAgent;
  namespace: string;
  tokens: TaskTokenBindings;
  /** Seals what agents send before Temporal stores it, and unseals what they are given. */
  codec?: PayloadCodec;
}

export type Admission = { forward: Uint8Array; answer?: (response: Uint8Array) => Promise<Uint8Array> } | { refuse: string; message: string };

type Walk<T> = (root: T, env: never, context: void) => Promise<unknown>[];

/** Applies the codec to every payload of a message but its search attributes and headers. */
async function transformPayloads<T>(message: T, walk: Walk<T>, codec: PayloadCodec | undefined, direction: 'encode' | 'decode'): Promise<void> {
  if (!codec) return;
  await visit(message, walk as never, {
    transformPayloads: (payloads) => codec[direction](payloads),
    transformPayload: async (payload) => (await codec[direction]([payload]))[0] ?? payload,
    skipHeaders: true,
    skipSearchAttributes: true,
  });
}

function wrongNamespace(namespace: string, expected: string): Admission | undefined {
  if (namespace === expected) return undefined;
  return { refuse: 'wrong-namespace', message: `this gateway serves namespace ${expected} only` };
}

interface TokenMessage {
  namespace: string;
  taskToken: Uint8Array;
  identity: string;
}

interface MessageClass<T> {
  decode(bytes: Uint8Array): T;
  encode(message: T): { finish(): Uint8Array };
}

/** A completion or heartbeat: for a task this identity polled, its payloads sealed. `ends`: the outcome a completion reports. */
function taskCall<T extends TokenMessage>(type: MessageClass<T>, walk: Walk<T>, ends?: 'completed' | 'failed' | 'canceled') {
  return async (bytes: Uint8Array, ctx: CallContext): Promise<Admission> => {
    const request = type.decode(bytes);
    const refused = wrongNamespace(request.namespace, ctx.namespace);
    if (refused) return refused;
    const owner = ctx.tokens.ownerOf(request.taskToken);
    if (owner !== ctx.agent.label) {
      return {
        refuse: owner ? 'task-of-another-agent' : 'unknown-task',
        message: 'this task was not polled by this agent through this gateway; only the agent that polled a task may heartbeat or complete it',
      };
    }
    request.identity = ctx.agent.label;
    await transformPayloads(request, walk, ctx.codec, 'encode');
    const forward = type.encode(request).finish();
    if (!ends) return { forward };
    return {
      forward,
      answer: async (response) => {
        const task = ctx.tokens.release(request.taskToken);
        if (task) agentStepSeconds.observe({ step: task.step, role: ctx.agent.role, outcome: ends }, (Date.now() - task.boundAt) / 1000);
        return response;
      },
    };
  };
}

export const AGENT_CALLS: Record<string, (bytes: Uint8Array, ctx: CallContext) => Promise<Admission>> = {
  // The SDK's handshake: server capabilities, the namespace's existence.
  GetSystemInfo: async (bytes) => ({ forward: bytes }),
  DescribeNamespace: async (bytes, ctx) => {
    const request = ws.DescribeNamespaceRequest.decode(bytes);
    if (request.id) return { refuse: 'namespace-by-id', message: 'describe the namespace by name' };
    return wrongNamespace(request.namespace, ctx.namespace) ?? { forward: bytes };
  },
  PollActivityTaskQueue: async (bytes, ctx) => {
    const request = ws.PollActivityTaskQueueRequest.decode(bytes);
    const refused = wrongNamespace(request.namespace, ctx.namespace);
    if (refused) return refused;
    if (request.taskQueue?.name !== ctx.agent.taskQueue) {
      return { refuse: 'wrong-task-queue', message: `this certificate may poll ${ctx.agent.taskQueue} only` };
    }
    request.identity = ctx.agent.label;
    return {
      forward: ws.PollActivityTaskQueueRequest.encode(request).finish(),
      answer: async (responseBytes) => {
        const response = ws.PollActivityTaskQueueResponse.decode(responseBytes);
        if (response.taskToken.length === 0) return responseBytes; // the long poll ended empty
        ctx.tokens.bind(response.taskToken, ctx.agent.label, response.activityType?.name ?? '');
        if (!ctx.codec) return responseBytes;
        await transformPayloads(response, walkPollActivityTaskQueueResponse as Walk<typeof response>, ctx.codec, 'decode');
        return ws.PollActivityTaskQueueResponse.encode(response).finish();
      },
    };
  },
  RecordActivityTaskHeartbeat: taskCall(ws.RecordActivityTaskHeartbeatRequest, walkRecordActivityTaskHeartbeatRequest),
  RespondActivityTaskCompleted: taskCall(ws.RespondActivityTaskCompletedRequest, walkRespondActivityTaskCompletedRequest, 'completed'),
  RespondActivityTaskFailed: taskCall(ws.RespondActivityTaskFailedRequest, walkRespondActivityTaskFailedRequest, 'failed'),
  RespondActivityTaskCanceled: taskCall(ws.RespondActivityTaskCanceledRequest, walkRespondActivityTaskCanceledRequest, 'canceled'),
  // A stopping worker says so; only its own (empty) sticky queue may be named.
  ShutdownWorker: async (bytes, ctx) => {
    const request = ws.ShutdownWorkerRequest.decode(bytes);
    const refused = wrongNamespace(request.namespace, ctx.namespace);
    if (refused) return refused;
    if (request.stickyTaskQueue) return { refuse: 'sticky-queue', message: 'an activity worker has no sticky queue' };
    request.identity = ctx.agent.label;
    return { forward: ws.ShutdownWorkerRequest.encode(request).finish() };
  },
};
