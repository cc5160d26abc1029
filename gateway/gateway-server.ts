// The agent gateway: the only door from agents to Temporal. A gRPC server with mTLS (client
// certificates from the node CA) in front of the Temporal frontend that forwards an
// activity worker's calls for the one task queue the certificate names (agent-calls.ts),
// binds each task to the identity that polled it, and re-checks revocation and expiry so a
// cut-off identity loses even its long polls within seconds.
import * as grpc from '@grpc/grpc-js';
import type { PayloadCodec } from '@temporalio/common';
import type { Db } from '../services/db';
import { IronflowError } from '../core/errors';
import { gatewayCallErrors, gatewayCalls, gatewayCallsRefused, gatewayOpenCalls, gatewayTasksUndelivered } from '../services/metrics/registry';
import { fingerprintOf, type NodeCa } from '../services/pki/node-ca';
import { AGENT_CALLS, type Admission, type CallContext } from './agent-calls';
import { AgentIdentities, ACCEPTED_FOR_MS, type GatewayAgent } from './agent-identities';
import { callLimitFor, InFlightCalls, type OpenCall } from './in-flight-calls';
import { RefusalEvents } from './refusal-events';
import { GATEWAY_SERVER_NAME, issueGatewayCertificate } from './server-certificate';
import { TaskTokenBindings } from './task-token-bindings';
import { methodNamesOf } from '../services/temporal-proto';
import type { TemporalConnectionOptions } from '../services/temporal/connection-options';
import { MAX_MESSAGE_BYTES, TemporalUpstream } from './upstream';
import { upstreamDeadline } from './upstream-deadline';

/** Every method of these services answers (refused unless agent-calls.ts admits it), so each probe is recorded. */
const SERVICES = ['temporal.api.workflowservice.v1.WorkflowService', 'temporal.api.operatorservice.v1.OperatorService'];

interface AgentGatewayOptions {
  db: Db;
  ca: NodeCa;
  /** The Temporal frontend, reachable from the control plane only (services/temporal/connection-options.ts). */
  temporal: TemporalConnectionOptions;
  namespace: string;
  host: string;
  port: number;
  codec?: PayloadCodec;
}

export interface AgentGateway {
  /** host:port as bound. */
  address: string;
  serverName: string;
  close(): Promise<void>;
}

type UnaryCall = grpc.ServerUnaryCall<Buffer, Buffer>;
type Callback = grpc.sendUnaryData<Buffer>;

const asBytes = (bytes: Buffer): Buffer => bytes;

function boundedDeadline(asked: grpc.Deadline): Date {
  return new Date(upstreamDeadline(asked instanceof Date ? asked.getTime() : asked, Date.now()));
}

/** Our errors name their cause and fix and hold no secret; anything else is not quoted to an agent. */
function explain(error: unknown): string {
  return error instanceof IronflowError ? error.message : "internal error (the control plane's database or Temporal may be unavailable)";
}

function status(code: grpc.status, details: string): Partial<grpc.ServiceError> {
  return { code, details, message: details };
}

export async function startAgentGateway(options: AgentGatewayOptions): Promise<AgentGateway> {
  const identities = new AgentIdentities(options.db, options.ca);
  const tokens = new TaskTokenBindings();
  const inFlight = new InFlightCalls();
  const refusals = new RefusalEvents(options.db);
  const upstream = new TemporalUpstream(options.temporal);

  async function authenticate(call: UnaryCall): Promise<{ agent: GatewayAgent; der: Uint8Array }> {
    const raw = call.getAuthContext()?.sslPeerCertificate?.raw;
    if (!raw) throw new IronflowError('UNAUTHENTICATED', 'the agent gateway needs the client certificate Join issued');
    const der = new Uint8Array(raw);
    return { agent: await identities.check(der), der };
  }

  function forward(path: string, method: string, call: UnaryCall, answer: Callback): void {
    let role = '';
    // Every answer goes out here: an error is counted by the call and its gRPC status.
    const callback: Callback = (error, response) => {
      if (error) gatewayCallErrors.inc({ role, method, code: grpc.status[error.code ?? grpc.status.UNKNOWN] ?? String(error.code) });
      answer(error, response);
    };
    void (async () => {
      let caller: { agent: GatewayAgent; der: Uint8Array };
      try {
        caller = await authenticate(call);
      } catch (error) {
        // A verdict refuses the identity; a check that could not be made (the database did not
        // answer) says nothing of it: the agent is told to try again, not that it is unknown.
        if (error instanceof IronflowError) callback(status(grpc.status.UNAUTHENTICATED, error.message));
        else
          callback(
            status(
              grpc.status.UNAVAILABLE,
              "agent gateway: the client certificate could not be checked now (the control plane's database did not answer); try again",
            ),
          );
        return;
      }
      const { agent, der } = caller;
      role = agent.role;
      const refuse = (reason: string, message: string) => {
        refusals.record({ tenantId: agent.tenantId, nodeId: agent.nodeId, method, reason, message });
        callback(status(grpc.status.PERMISSION_DENIED, `agent gateway: ${method} refused (${reason}): ${message}`));
      };
      const route = AGENT_CALLS[method];
      if (!route) return refuse('not-an-activity-worker-call', 'agents may only poll, heartbeat and complete activity tasks of their own queue');
      const ctx: CallContext = { agent, namespace: options.namespace, tokens, ...(options.codec ? { codec: options.codec } : {}) };
      let admission: Admission;
      try {
        admission = await route(call.request, ctx);
      } catch {
        callback(status(grpc.status.INVALID_ARGUMENT, `agent gateway: ${method}: the request is not a well-formed ${method} message`));
        return;
      }
      if ('refuse' in admission) return refuse(admission.refuse, admission.message);
      const fingerprint = fingerprintOf(der);
      let settled = false;
      const settle = (error: Partial<grpc.ServiceError> | null, response?: Buffer) => {
        if (settled) return;
        settled = true;
        inFlight.close(fingerprint, open);
        gatewayOpenCalls.dec({ role: agent.role });
        // Temporal's own refusal for load; for polls, its cap on a namespace's concurrent polls.
        if (error?.code === grpc.status.RESOURCE_EXHAUSTED) gatewayCallsRefused.inc({ role: agent.role, reason: 'temporal-resource-exhausted' });
        callback(error, response);
      };
      const open: OpenCall = {
        cutOff: (message) => {
          upstreamCall?.cancel();
          settle(status(grpc.status.UNAUTHENTICATED, message));
        },
      };
      const limit = callLimitFor(agent.role);
      if (!inFlight.open(fingerprint, open, limit)) {
        gatewayCallsRefused.inc({ role: agent.role, reason: 'too-many-open-calls' });
        callback(status(grpc.status.RESOURCE_EXHAUSTED, `agent gateway: ${limit} calls already open for this ${agent.role} identity`));
        return;
      }
      gatewayOpenCalls.inc({ role: agent.role });
      gatewayCalls.inc({ role: agent.role, method });
      // A poll's answer with a task (an empty answer is no task) is on its way to the agent.
      let taskInHand = false;
      call.on('cancelled', () => {
        if (!settled && taskInHand) gatewayTasksUndelivered.inc({ role: agent.role });
        upstreamCall?.cancel();
        settle(status(grpc.status.CANCELLED, 'cancelled by the agent'));
      });
      const upstreamCall = upstream.call(path, admission.forward, call.metadata, boundedDeadline(call.getDeadline()), (error, response) => {
        if (error || !response) return settle(error ?? status(grpc.status.INTERNAL, 'empty answer from Temporal'));
        taskInHand = method.startsWith('Poll') && response.length > 0;
        const answer = admission.answer ?? (async (bytes: Uint8Array) => bytes);
        answer(response).then(
          (bytes) => settle(null, Buffer.from(bytes)),
          (error: unknown) => settle(status(grpc.status.INTERNAL, `agent gateway: the step's input could not be unsealed for the agent: ${explain(error)}`)),
        );
      });
    })().catch((error: unknown) => callback(status(grpc.status.INTERNAL, `agent gateway: ${explain(error)}`)));
  }

  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    // Temporal's core SDK pings every 30 s on idle connections; allow it.
    'grpc.http2.min_ping_interval_without_data_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
  });
  for (const serviceName of SERVICES) {
    for (const method of methodNamesOf(serviceName)) {
      const path = `/${serviceName}/${method}`;
      server.register(path, (call: UnaryCall, callback: Callback) => forward(path, method, call, callback), asBytes, asBytes, 'unary');
    }
  }

  // Revocation and expiry reach calls already open: the identities holding them are checked again.
  let sweeping = false;
  const sweep = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    identities
      .invalidAmong(inFlight.fingerprints())
      .then((invalid) => {
        for (const [fingerprint, why] of invalid) inFlight.cutOff(fingerprint, why);
      })
      .catch(() => undefined) // the database is away: calls stay open until it answers again
      .finally(() => (sweeping = false));
  }, ACCEPTED_FOR_MS);
  sweep.unref();

  const tls = await issueGatewayCertificate(options.ca);
  const credentials = grpc.ServerCredentials.createSsl(
    Buffer.from(options.ca.certificatePem),
    [{ cert_chain: Buffer.from(tls.certificatePem), private_key: Buffer.from(tls.privateKeyPem) }],
    true,
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host}:${options.port}`, credentials, (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  return {
    address: `${options.host}:${port}`,
    serverName: GATEWAY_SERVER_NAME,
    async close() {
      clearInterval(sweep);
      await new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2_000).unref();
      });
      upstream.close();
    },
  };
}
