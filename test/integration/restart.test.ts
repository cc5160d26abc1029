// Restarting the stack keeps a created object and a finished workflow's history: the
// database is a file in the data dir, and so is the Temporal dev server's store.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/config';
import type { SystemCheckView } from '../../core/schemas/system';
import { serverSettings, startTemporalServer, type TemporalServer } from '../../stack/temporal-server';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { freePort } from '../helpers/ports';

let server: TemporalServer | undefined;
let t: TestControlPlane | undefined;
afterAll(async () => {
  await t?.close();
  await server?.stop();
});

async function startServer(address: string, dbFile: string, logFile: string): Promise<TemporalServer> {
  const defaults = loadConfig({});
  return startTemporalServer({
    address,
    namespace: 'default',
    dbFile,
    ...serverSettings(defaults.temporal),
    logFile,
  });
}

describe('a restart of the whole stack', () => {
  it('keeps database rows and workflow histories, across a crash of the Temporal server too', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const config = await testConfig({ IRONFLOW_TEMPORAL_ADDRESS: address });
    const dbFile = path.join(config.dataDir, 'temporal.db');
    const logFile = path.join(inject('runDir'), 'restart-temporal.log');

    server = await startServer(address, dbFile, logFile);
    t = await startTestControlPlane({ config });
    const bearer = t.cp.rootCredential.bearer;
    await t.root.call('POST', '/v1/tenants', { id: 'survivor', name: 'Survives restarts' });
    const check = await t.root.call<SystemCheckView>('POST', '/v1/system/checks', { tenantId: 'root' });
    await t.cp.temporal.workflow.getHandle(check.workflowId).result();
    await t.close();
    t = undefined;
    // The store runs in WAL mode (temporal-dev.yaml), and a crash of the server (SIGKILL: no
    // checkpoint, no clean close) loses none of its commits.
    expect(existsSync(`${dbFile}-wal`)).toBe(true);
    await server.stop('SIGKILL');

    server = await startServer(address, dbFile, logFile);
    t = await startTestControlPlane({ config });
    expect(t.cp.rootCredential.created).toBe(false);
    expect(t.cp.rootCredential.bearer).toBe(bearer);
    const events = await t.root.call<{ events: Array<{ subjectId: string }> }>('GET', '/v1/events?tenantId=survivor');
    expect(events.events.map((e) => e.subjectId)).toContain('survivor');
    const reread = await t.root.call<SystemCheckView>('GET', `/v1/system/checks/${check.id}?tenantId=root`);
    expect(reread.status).toBe('succeeded');
    const handle = t.cp.temporal.workflow.getHandle(check.workflowId);
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    const history = await handle.fetchHistory();
    expect(history.events?.length ?? 0).toBeGreaterThan(5);
  });
});
