// The API under load, in a process of its own (the load generator runs in another): a
// control plane on a fresh Temporal dev server and on the database DATABASE_URL names (SQLite
// when unset), with a site, a pool and 500 metal nodes to read and to act on (metal
// maintenance). Prints one JSON line { url, bearer, poolId, nodeIds } when ready, and runs until
// killed.
//
//   npx tsx bench/api/serve.ts
import { newId } from '../../services/ids';
import { startControlPlane } from '../../stack/control-plane';
import { startBenchStack } from '../lib/bench-stack';

const NODES = 500;

async function main(): Promise<void> {
  const stack = await startBenchStack('api', { IRONFLOW_LOG_LEVEL: 'warn' });
  const { config } = stack;
  const cp = await startControlPlane(config);
  const siteId = newId('site');
  const poolId = newId('pool');
  await cp.db.site.create({
    data: { id: siteId, ownerTenantId: 'root', kind: 'shared', region: 'bench', callerId: 'bench', idempotencyKey: 'bench', requestHash: 'bench' },
  });
  await cp.db.pool.create({ data: { id: poolId, tenantId: 'root', siteId, class: 'bench', policy: {} } });
  const ids = Array.from({ length: NODES }, () => newId('node'));
  await cp.db.node.createMany({
    data: ids.map((id, i) => ({
      id,
      tenantId: 'root',
      siteId,
      poolId,
      role: 'machine',
      provisionState: 'ready',
      power: 'off',
      macs: [
        `52:54:00:00:${Math.floor(i / 256)
          .toString(16)
          .padStart(2, '0')}:${(i % 256).toString(16).padStart(2, '0')}`,
      ],
    })),
  });
  process.stdout.write(`${JSON.stringify({ url: cp.url, bearer: cp.rootCredential.bearer, poolId, nodeIds: ids })}\n`);
  const stop = async () => {
    await cp.close();
    await stack.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
