// `npm start`: the Temporal dev server (SQLite in the data dir, Web UI), then the API and
// the control-plane worker. Ctrl-C stops all of them; a second start reuses the data.
import path from 'node:path';
import { defaultApiLog } from '../api/log-file';
import { loadConfig } from '../services/config';
import { startControlPlane } from './control-plane';
import { secureDataDir } from './data-dir';
import { devServerOptions, startTemporalServer, type TemporalServer } from './temporal-server';

async function main(): Promise<void> {
  const config = loadConfig();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`ironflow: data dir ${config.dataDir}`);
  secureDataDir(config.dataDir);
  say(`ironflow: starting the Temporal dev server on ${config.temporal.address} (Web UI :${config.temporal.uiPort})…`);
  const temporalServer: TemporalServer = await startTemporalServer(devServerOptions(config));
  let controlPlane: Awaited<ReturnType<typeof startControlPlane>> | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`\nironflow: ${signal}: stopping the API, the worker and the Temporal dev server…`);
    await controlPlane?.close().catch((err) => say(`ironflow: ${String(err)}`));
    await temporalServer.stop();
    say('ironflow: stopped.');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  try {
    controlPlane = await startControlPlane(config, { logger: defaultApiLog(config.dataDir, process.env.IRONFLOW_LOG_LEVEL) });
  } catch (err) {
    await temporalServer.stop();
    throw err;
  }
  const host = config.temporal.address.split(':')[0];
  say(`ironflow: API          ${controlPlane.url}  (OpenAPI UI: ${controlPlane.url}/docs)`);
  say(`ironflow: gateway      ${controlPlane.gateway.address}  (agents reach Temporal here, mTLS)`);
  say(`ironflow: Temporal UI  http://${host}:${config.temporal.uiPort}`);
  say(`ironflow: worker       task queue ${config.controlQueue}`);
  say(`ironflow: API log      ${defaultApiLog(config.dataDir).file}  (level ${process.env.IRONFLOW_LOG_LEVEL ?? 'info'}: IRONFLOW_LOG_LEVEL)`);
  if (controlPlane.rootCredential.created) {
    say(`ironflow: root credential (shown once; also in ${controlPlane.rootCredential.file}, mode 0600):`);
    say(`  ${controlPlane.rootCredential.bearer}`);
  } else {
    say(`ironflow: root credential in ${controlPlane.rootCredential.file}`);
  }
  say('ironflow: ready. Try `npx ironflow status` in another terminal. Ctrl-C stops everything.');
}

main().catch((err: unknown) => {
  process.stderr.write(`ironflow: start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
