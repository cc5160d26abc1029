// `npm start`: the Temporal dev server (SQLite in the data dir, Web UI), then the API and
// the control-plane worker. Ctrl-C stops all of them; a second start reuses the data.
import { defaultApiLog } from '../api/log-file';
import { IronflowError } from '../core/errors';
import { loadConfig } from '../services/config';
import { startControlPlane } from './control-plane';
import { secureDataDir } from './data-dir';
import { announceControlPlane, say, StackParts, startFailed } from './stack-run';
import { devServerOptions, startTemporalServer } from './temporal-server';

async function main(): Promise<void> {
  const config = loadConfig();
  // The dev server this starts serves plain gRPC: TLS settings are for a cluster of your own.
  if (config.temporal.tls)
    throw new IronflowError(
      'INVALID_CONFIG',
      'npm start runs a plain-gRPC Temporal dev server, so temporal.tls (IRONFLOW_TEMPORAL_TLS_*) cannot apply: unset it, or run against your cluster as docs/operations.md says',
      { path: 'temporal.tls' },
    );
  say(`ironflow: data dir ${config.dataDir}`);
  secureDataDir(config.dataDir);
  const parts = new StackParts('the API, the worker and the Temporal dev server');
  say(`ironflow: starting the Temporal dev server on ${config.temporal.address} (Web UI :${config.temporal.uiPort})…`);
  const temporalServer = await startTemporalServer(devServerOptions(config));
  parts.add('the Temporal dev server', () => temporalServer.stop());
  try {
    const controlPlane = await startControlPlane(config, { logger: defaultApiLog(config.dataDir, process.env.IRONFLOW_LOG_LEVEL) });
    parts.add('the control plane', () => controlPlane.close());
    const host = config.temporal.address.split(':')[0];
    announceControlPlane(controlPlane, [
      `ironflow: Temporal UI  http://${host}:${config.temporal.uiPort}`,
      `ironflow: worker       task queue ${config.controlQueue}`,
    ]);
  } catch (err) {
    await parts.stopAll('start failed');
    throw err;
  }
  say('ironflow: ready. Try `npx ironflow status` in another terminal. Ctrl-C stops everything.');
}

main().catch(startFailed);
