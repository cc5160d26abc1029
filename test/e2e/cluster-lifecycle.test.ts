// The node lifecycle on the cluster profile (`npm run start:cluster`'s Temporal): the real
// Temporal server, not the dev server, on its own PostgreSQL, with the schema set up by
// Temporal's SQL tool and the namespace and search attributes registered as an operator
// would (stack/temporal-cluster.ts, docs/operations.md), its frontend on TLS requiring a
// client certificate; Ironflow's API in this process and two control-plane worker processes
// on one task queue of that namespace, each presenting the cluster's client certificate
// (temporal.tls), as do the agent gateway's calls upstream. One emulated
// machine goes enroll → ready → deploy → release (undeploy, back to ready), and its
// workflows are found by their search attributes in the cluster's SQL visibility.
//
// Needs the server built (scripts/temporal-cluster-deps.sh, which scripts/test-deps.sh runs
// when IRONFLOW_E2E_CLUSTER=1). CI runs it once, in its PostgreSQL pass (.ci/run sets
// IRONFLOW_E2E_CLUSTER=1 there); elsewhere it is skipped, saying so.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PostgresServer } from '../../stack/postgres';
import { startTemporalCluster, type ClusterPorts, type TemporalCluster } from '../../stack/temporal-cluster';
import { Connection } from '@temporalio/client';
import { loadConfig, type TemporalTlsSettings } from '../../services/config';
import { temporalConnectionOptions } from '../../services/temporal/connection-options';
import { makeClientCertificate, makeServerCertificate } from '../../stack/throwaway-tls';
import { temporal as proto } from '../../services/temporal-proto';
import { until } from '../helpers/boot-site';
import { sha, startE2eSite, type E2eSite } from '../helpers/e2e-site';
import { freePort } from '../helpers/ports';

const NAMESPACE = 'ironflow-e2e';

const skipReason =
  process.env.IRONFLOW_E2E_CLUSTER === '1'
    ? undefined
    : "IRONFLOW_E2E_CLUSTER is not 1: the lifecycle on a real Temporal cluster runs once, in CI's PostgreSQL pass (set it to run it here)";
if (skipReason) process.stderr.write(`cluster-lifecycle: skipped: ${skipReason}\n`);

let dir: string | undefined;
let postgres: PostgresServer | undefined;
let cluster: TemporalCluster | undefined;
let site: E2eSite;

/** A port free right now on 127.0.0.1 below 32768: the server stores membership ports in a PostgreSQL smallint. */
async function freeLowPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

async function freeClusterPorts(): Promise<ClusterPorts> {
  const names = ['frontend', 'frontendMembership', 'history', 'historyMembership', 'matching', 'matchingMembership', 'worker', 'workerMembership'] as const;
  const ports: Partial<ClusterPorts> = {};
  for (const name of names) ports[name] = name.endsWith('Membership') ? await freeLowPort() : await freePort();
  return ports as ClusterPorts;
}

beforeAll(async () => {
  if (skipReason) return;
  dir = mkdtempSync(path.join(tmpdir(), 'ironflow-cluster-'));
  chmodSync(dir, 0o711); // PostgreSQL runs as the postgres user when the tests run as root
  postgres = await startPostgres(path.join(dir, 'postgres'), await freePort());
  const { temporal } = loadConfig();
  cluster = await startTemporalCluster({
    dir: path.join(dir, 'temporal'),
    postgresUrl: postgres.url,
    host: '127.0.0.1',
    ports: await freeClusterPorts(),
    namespace: NAMESPACE,
    searchAttributes: temporal.searchAttributes,
    dynamicConfig: temporal.dynamicConfig,
  });
  site = await startE2eSite('e2e-cluster', {
    temporalAddress: cluster.address,
    temporalNamespace: cluster.namespace,
    temporalTls: cluster.clientTls,
    workerProcess: true,
  });
  await site.startWorker();
}, 300_000);

afterAll(async () => {
  await site?.close();
  await cluster?.stop();
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skipReason !== undefined)('the node lifecycle on a real Temporal cluster (PostgreSQL persistence and visibility)', () => {
  it('the frontend requires TLS and a client certificate from its CA, and answers a connection that presents one', async () => {
    const { clientTls, address } = cluster as TemporalCluster;
    const describeNamespace = async (tls: TemporalTlsSettings | undefined) => {
      const connection = await Connection.connect({ ...temporalConnectionOptions({ address, ...(tls ? { tls } : {}) }), connectTimeout: 5_000 });
      try {
        return await connection.workflowService.describeNamespace({ namespace: NAMESPACE });
      } finally {
        await connection.close();
      }
    };
    // The CA alone (TLS, no client certificate): the handshake is refused.
    await expect(describeNamespace({ ...(clientTls.caFile ? { caFile: clientTls.caFile } : {}) })).rejects.toThrow();
    // Plain gRPC to a TLS listener: refused.
    await expect(describeNamespace(undefined)).rejects.toThrow();
    // A client certificate the frontend's CA did not issue: refused.
    const foreign = mkdtempSync(path.join(dir as string, 'foreign-'));
    makeServerCertificate(foreign, 'not-the-cluster');
    const foreignClient = makeClientCertificate(foreign, 'not-the-control-plane');
    await expect(describeNamespace({ ...clientTls, clientCertificate: foreignClient })).rejects.toThrow();
    // The cluster's client certificate: answered.
    expect((await describeNamespace(clientTls)).namespaceInfo?.name).toBe(NAMESPACE);
  }, 60_000);

  it('two control-plane worker processes poll the control task queue in the cluster namespace', async () => {
    const pollers = await until(
      'both worker processes to poll',
      async () => {
        const { pollers } = await site.t.cp.temporal.workflowService.describeTaskQueue({
          namespace: NAMESPACE,
          taskQueue: { name: site.t.config.controlQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
          taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        });
        const identities = new Set((pollers ?? []).map((p) => p.identity));
        return identities.size >= 2 ? identities : undefined;
      },
      60_000,
    );
    expect(pollers.size).toBe(2);
  }, 90_000);

  it('a machine enrolled by its BMC reaches ready, deploys a signed image and releases back to ready', async () => {
    const [enrolled] = await site.enrollToReady(1, 180_000);
    const { nodeId, machine } = enrolled as NonNullable<typeof enrolled>;
    // Found through the NodeId search attribute, registered on the namespace by the profile.
    expect((await site.stateWorkflows(nodeId)).sort()).toEqual([`node:${nodeId}:commissioning:3`, `node:${nodeId}:enrolling:1`, `node:${nodeId}:inspecting:2`]);

    const osImage = Buffer.alloc(1024 * 1024 + 11, 0x5a);
    await site.registerImage('cluster-os@1', osImage);
    await site.deployProfile('cluster-os-host', 'cluster-os@1');
    expect((await site.verb(nodeId, 'deploy', { profileId: 'cluster-os-host', profileVersion: 1 })).provisionState).toBe('deploying');
    expect(await site.settle(nodeId, 'deployed', 150_000)).toMatchObject({ role: 'host', power: 'on' });
    expect(sha(readFileSync(machine.diskPath).subarray(0, osImage.length))).toBe(sha(osImage));
    expect(machine.state).toBe('installed-os');

    expect((await site.verb(nodeId, 'undeploy')).provisionState).toBe('releasing');
    expect(await site.settle(nodeId, 'ready', 150_000)).toMatchObject({ role: 'machine', power: 'off' });
    expect(
      readFileSync(machine.diskPath)
        .subarray(0, 4096)
        .every((b) => b === 0),
    ).toBe(true);
    expect(site.bootEntries()).toEqual([]);

    // The histories are the cluster's: its PostgreSQL holds every state workflow of the node.
    const temporalDb = new pg.Client({ connectionString: (postgres as PostgresServer).database('temporal') });
    await temporalDb.connect();
    try {
      const { rows } = await temporalDb.query<{ workflow_id: string }>('SELECT workflow_id FROM current_executions WHERE workflow_id LIKE $1', [
        `node:${nodeId}:%`,
      ]);
      expect(rows.map((r) => r.workflow_id)).toEqual(expect.arrayContaining([`node:${nodeId}:deploying:4`, `node:${nodeId}:releasing:5`]));
    } finally {
      await temporalDb.end();
    }
  }, 600_000);
});
