// `npm run demo` (stack/demo.ts) as a newcomer runs it: an emulated machine enrolled by its BMC
// and taken to ready, deployed and released by the real site agent, ramdisk and node agent,
// then Ctrl-C stops everything it started. On free ports, SQLite in a data dir of its own and
// the run's prebuilt workflow bundle, so it runs beside the other tests.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../../services/config';
import { freePort } from '../helpers/ports';

const DONE = 'demo: done.';

describe('npm run demo', () => {
  it('takes a machine from its BMC to ready, deploys and releases it, and stops on SIGINT', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'stack/demo.ts')], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DEMO_MACHINES: '1',
        IRONFLOW_DATA_DIR: mkdtempSync(path.join(inject('runDir'), 'demo-')),
        IRONFLOW_TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
        IRONFLOW_TEMPORAL_UI_PORT: String(await freePort()),
        IRONFLOW_API_PORT: String(await freePort()),
        IRONFLOW_GATEWAY_PORT: String(await freePort()),
        IRONFLOW_WORKFLOW_BUNDLE: inject('workflowBundle'),
        DATABASE_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: SIGINT reaches it as Ctrl-C would, and nothing it started outlives the test.
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const done = await Promise.race([
        new Promise<boolean>((resolve) => child.stdout.on('data', () => output.includes(DONE) && resolve(true))),
        exited.then(() => false),
      ]);
      expect(done, output.slice(-4000)).toBe(true);
      expect(output).toMatch(/m0001 node_\w+: ready/);
      expect(output).toMatch(/deployed: role host; the image is on .*m0001\.disk; the installed OS's node agent joined as node_\w+/);
      expect(output).toMatch(/m0001 node_\w+: releasing/);
      expect(output.slice(output.lastIndexOf('releasing'))).toMatch(/m0001 node_\w+: ready/);
      process.kill(-(child.pid as number), 'SIGINT');
      expect(await exited).toBe(0);
      expect(output).toContain('demo: stopped.');
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid as number), 'SIGKILL');
    }
  }, 300_000);
});
