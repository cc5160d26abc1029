// A real Temporal dev server for tests, on free ports, with temporal-dev.yaml's settings (the
// run's shared one in test/global-setup.ts; a test that needs other dynamic config starts its own).
import path from 'node:path';
import { loadConfig } from '../../services/config';
import { serverSettings, startTemporalServer, type TemporalServer, TemporalServerExitedError } from '../../stack/temporal-server';
import { freePort } from './ports';

/**
 * The server on free ports. A port found free can be taken before the server binds it (the
 * dev server picks its internal ports the same way), so an early exit is tried again on
 * other ports, each attempt with its own store and log; any other failure is final.
 */
export async function startTestTemporalServer(
  dir: string,
  options: { name?: string; dynamicConfig?: Record<string, unknown>; taskQueuePartitions?: number; attempts?: number; dbFile?: string } = {},
): Promise<{ server: TemporalServer; address: string }> {
  const settings = serverSettings(loadConfig().temporal);
  const name = options.name ?? 'temporal';
  for (let attempt = 1; ; attempt++) {
    const address = `127.0.0.1:${await freePort()}`;
    try {
      const started = await startTemporalServer({
        address,
        namespace: 'default',
        dbFile: options.dbFile ?? path.join(dir, `${name}-${attempt}.db`),
        ...settings,
        ...(options.taskQueuePartitions ? { taskQueuePartitions: options.taskQueuePartitions } : {}),
        dynamicConfig: { ...settings.dynamicConfig, ...options.dynamicConfig },
        logFile: path.join(dir, `${name}-${attempt}.log`),
      });
      return { server: started, address };
    } catch (err) {
      if (!(err instanceof TemporalServerExitedError) || attempt >= (options.attempts ?? 3)) throw err;
      console.warn(`${name}: ${(err as Error).message}\n${name}: trying again on other ports`);
    }
  }
}
