// One of the processes serving the API beside the control plane's own (stack/api-processes.ts
// starts it): it opens the database, the secret store and a Temporal client as the control
// plane does (stack/api-dependencies.ts), and answers on the listening socket it is handed. A
// scrape of GET /metrics that reaches it is answered with the sum over every API process, which
// the control plane's process gathers. It stops on SIGTERM (its requests answered first), and
// when the control plane's process is gone (its IPC channel closes); SIGINT it leaves to the
// control plane's process.
import type { Server } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../api/server';
import { apiTlsMaterial } from '../services/api-tls';
import { loadOrCreateNodeCa } from '../services/pki/node-ca';
import { metricsRegistry } from '../services/metrics/registry';
import { temporalConnectionOptions } from '../services/temporal/connection-options';
import { openApiDependencies, type ApiDependencies } from './api-dependencies';
import { API_LISTEN_BACKLOG, METRICS_WAIT_MS } from './api-processes';
import type { FromApiProcess, ToApiProcess } from './api-process-messages';
import { tuneGarbageCollector } from './garbage-collector';
import { PendingAnswers } from './ipc-answers';

type ServeMessage = Extract<ToApiProcess, { kind: 'serve' }>;

const allMetricsAnswers = new PendingAnswers<string>();
let serving: Promise<{ api: FastifyInstance; dependencies: ApiDependencies }> | undefined;

function tell(message: FromApiProcess, failed: () => void = () => undefined): void {
  if (!process.connected || !process.send) return failed();
  process.send(message, undefined, undefined, (error: Error | null) => error && failed());
}

/** What every API process has served, gathered by the control plane's process (which waits up to METRICS_WAIT_MS for each). */
async function allProcessesMetrics(): Promise<string> {
  const text = await allMetricsAnswers.ask((id, failed) => tell({ kind: 'all-metrics', id }, failed), 2 * METRICS_WAIT_MS);
  if (text === undefined) throw new Error('the control plane’s process did not answer with the API processes’ metrics');
  return text;
}

/** The socket the control plane sends once asked (a `listen` message), taken over as it arrives. */
let socketArrived: ((listening: Server) => void) | undefined;

async function serve({ config, agentGateway, workerSdkMetricsAddress, logger }: ServeMessage) {
  tuneGarbageCollector();
  const https = apiTlsMaterial(config);
  const dependencies = await openApiDependencies(config, temporalConnectionOptions(config.temporal));
  const { db, secrets, temporal } = dependencies;
  // The control plane's process made the node CA and wrote its certificate to the data dir: loaded here.
  const nodeCa = await loadOrCreateNodeCa(db, secrets);
  const api = await buildServer(
    { db, secrets, temporal, nodeCa, config, agentGateway, processMetrics: allProcessesMetrics, workerSdkMetricsAddress },
    { logger, https },
  );
  await api.ready();
  await new Promise<void>((resolve, reject) => {
    socketArrived = (listening) => {
      api.server.once('error', reject);
      api.server.listen(listening, API_LISTEN_BACKLOG, resolve);
    };
    tell({ kind: 'awaiting-socket' });
  });
  tell({ kind: 'ready' });
  return { api, dependencies };
}

process.on('message', (message: ToApiProcess, handle?: Server) => {
  switch (message.kind) {
    case 'serve':
      serving ??= serve(message);
      serving.catch((error: unknown) => {
        console.error('ironflow API process: could not serve:', error);
        process.exit(1);
      });
      return;
    case 'listen':
      if (!handle || !socketArrived) throw new Error('an API process was sent a listening socket it did not ask for');
      socketArrived(handle);
      return;
    case 'metrics':
      void metricsRegistry.getMetricsAsJSON().then((metrics) => tell({ kind: 'metrics', id: message.id, metrics }));
      return;
    case 'all-metrics':
      allMetricsAnswers.answer(message.id, message.text);
  }
});

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  const served = await serving?.catch(() => undefined);
  await served?.api.close();
  await served?.dependencies.close();
  process.exit(0);
}
process.once('SIGTERM', () => void stop());
// Ctrl-C reaches the whole process group: the control plane's process stops this one (SIGTERM) once it has stopped taking work.
process.on('SIGINT', () => undefined);
process.once('disconnect', () => void stop());
