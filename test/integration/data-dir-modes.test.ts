// The dev stack's data dir (databases, secret key, root credential, logs) is its owner's
// only: `npm start`'s own steps on a fresh dir leave it 0700 with every file 0600, and an
// existing dir an earlier version left readable to all is tightened at the next start.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { loadConfig } from '../../services/config';
import { startControlPlane, type ControlPlane } from '../../stack/control-plane';
import { secureDataDir } from '../../stack/data-dir';
import { devServerOptions, startTemporalServer, type TemporalServer } from '../../stack/temporal-server';
import { freePort } from '../helpers/ports';

const running: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const r of running.reverse()) await r.close();
});

/** Every entry under `dir` with its permission bits, e.g. { 'ironflow.db': '600' }. */
function modes(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const name = `${prefix}${entry.name}`;
    out[name] = (lstatSync(full).mode & 0o777).toString(8);
    if (entry.isDirectory()) Object.assign(out, modes(full, `${name}/`));
  }
  return out;
}

describe('the data dir', () => {
  it('is 0700 with 0600 files after a fresh start of Temporal and the control plane', async () => {
    const dataDir = path.join(mkdtempSync(path.join(inject('runDir'), 'data-dir-')), '.ironflow');
    const config = loadConfig({
      ...process.env,
      IRONFLOW_DATA_DIR: dataDir,
      IRONFLOW_TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
      IRONFLOW_TEMPORAL_UI_PORT: '0',
      IRONFLOW_API_PORT: '0',
      DATABASE_URL: '',
    });
    // As stack/dev-stack.ts does: the data dir first, then Temporal, then the control plane.
    secureDataDir(config.dataDir);
    const temporal: TemporalServer = await startTemporalServer(devServerOptions(config));
    running.push({ close: () => temporal.stop() });
    const cp: ControlPlane = await startControlPlane(config);
    running.push(cp);
    // Something written after the start, too.
    const res = await fetch(`${cp.url}/v1/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cp.rootCredential.bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'after-start', name: 'After start' }),
    });
    expect(res.status).toBe(201);

    const found = modes(dataDir);
    expect(Object.keys(found)).toEqual(expect.arrayContaining(['ironflow.db', 'temporal.db', 'temporal.log', 'root-credential']));
    expect((lstatSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    for (const [name, mode] of Object.entries(found)) {
      expect(mode, name).toBe(lstatSync(path.join(dataDir, name)).isDirectory() ? '700' : '600');
    }
  });

  it('tightens an existing dir and its files, keeping the owner execute bit of a program', () => {
    const dataDir = mkdtempSync(path.join(inject('runDir'), 'old-data-dir-'));
    chmodSync(dataDir, 0o755);
    writeFileSync(path.join(dataDir, 'ironflow.db'), '', { mode: 0o644 });
    mkdirSync(path.join(dataDir, 'ramdisk'), { mode: 0o755 });
    writeFileSync(path.join(dataDir, 'ramdisk', 'initrd.img'), '', { mode: 0o664 });
    writeFileSync(path.join(dataDir, 'ramdisk', 'build.sh'), '', { mode: 0o755 });
    secureDataDir(dataDir);
    expect((lstatSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    expect(modes(dataDir)).toEqual({ 'ironflow.db': '600', ramdisk: '700', 'ramdisk/initrd.img': '600', 'ramdisk/build.sh': '700' });
  });
});
