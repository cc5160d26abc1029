// The cluster profile's Temporal: the real Temporal server (all four services in one process)
// on PostgreSQL, as a production cluster runs it, built by scripts/temporal-cluster-deps.sh.
// Sets up its two databases with Temporal's own SQL tool, writes its config, starts it, then
// registers Ironflow's namespace and search attributes the way an operator would
// (docs/operations.md): the dev server does all of that by itself, a cluster does not. Its
// frontend serves TLS and requires a client certificate, as a production cluster's does: a
// throwaway CA in the cluster dir issues the frontend's and Ironflow's (clusterCertificates).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal as proto } from '../services/temporal-proto';
import { stringify } from 'yaml';
import { repoRoot, type TemporalTlsSettings } from '../services/config';
import { temporalConnectionOptions } from '../services/temporal/connection-options';
import { databaseExists } from './postgres';
import { spawnTemporalServer, type TemporalServer } from './temporal-server';
import { makeClientCertificate, makeServerCertificate } from './throwaway-tls';

const run = promisify(execFile);

/** Where scripts/temporal-cluster-deps.sh puts the server, its SQL tool and the schema files. */
const clusterToolsDir = path.join(repoRoot, '.tools', 'temporal-cluster');

/** The ports of the four services: gRPC for each, and the ring membership each joins. */
export interface ClusterPorts {
  frontend: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/** Temporal's usual layout around a frontend port (7233 → history 7234, matching 7235, worker 7239; membership 6933…). */
export function defaultClusterPorts(frontend: number): ClusterPorts {
  return {
    frontend,
    frontendMembership: frontend - 300,
    history: frontend + 1,
    historyMembership: frontend - 299,
    matching: frontend + 2,
    matchingMembership: frontend - 298,
    worker: frontend + 6,
    workerMembership: frontend - 294,
  };
}

interface TemporalClusterOptions {
  /** Config, dynamic config and log go here. */
  dir: string;
  /** The PostgreSQL server holding Temporal's databases (postgres://user[:password]@host:port/…). */
  postgresUrl: string;
  /** Temporal's two databases on it. */
  databases?: { main: string; visibility: string };
  host: string;
  ports: ClusterPorts;
  namespace: string;
  /** Registered on the namespace (temporal-dev.yaml's temporal.searchAttributes). */
  searchAttributes: Record<string, string>;
  /** temporal-dev.yaml's temporal.dynamicConfig, as the server's dynamic config file. */
  dynamicConfig: Record<string, unknown>;
  /** How long Temporal keeps a closed workflow's history. */
  retentionDays?: number;
}

export interface TemporalCluster extends TemporalServer {
  /** The frontend's host:port. */
  address: string;
  namespace: string;
  logFile: string;
  /** What a client needs to reach the frontend (temporal.tls): the cluster's CA and a client certificate it accepts. */
  clientTls: TemporalTlsSettings;
}

/** The frontend's TLS material: the CA, the server certificate for `host`, and the client certificate Ironflow and the system workers present. */
interface ClusterCertificates {
  caFile: string;
  server: { certFile: string; keyFile: string };
  client: { certFile: string; keyFile: string };
}

/** True when `certFile` stays valid for another day (openssl x509 -checkend). */
function validForADay(certFile: string): boolean {
  try {
    execFileSync('openssl', ['x509', '-checkend', '86400', '-noout', '-in', certFile], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

/** The certificates in `dir` (0700, keys 0600): reused while still valid, otherwise made afresh (a throwaway CA, stack/throwaway-tls.ts). */
function clusterCertificates(dir: string, host: string): ClusterCertificates {
  const file = (name: string) => path.join(dir, name);
  const certificates: ClusterCertificates = {
    caFile: file('ca.pem'),
    server: { certFile: file('server.pem'), keyFile: file('server.key') },
    client: { certFile: file('client.pem'), keyFile: file('client.key') },
  };
  const files = [certificates.caFile, certificates.server.certFile, certificates.server.keyFile, certificates.client.certFile, certificates.client.keyFile];
  if (files.every(existsSync) && [certificates.caFile, certificates.server.certFile, certificates.client.certFile].every(validForADay)) return certificates;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The frontend's address is what clients verify: an IP beside 127.0.0.1 goes in the certificate too.
  makeServerCertificate(dir, 'temporal-frontend', isIP(host) && host !== '127.0.0.1' ? [host] : []);
  makeClientCertificate(dir, 'ironflow-control-plane');
  return certificates;
}

/** Temporal's global.tls: the frontend requires a client certificate from the CA; the system workers present Ironflow's client certificate. */
function clusterTlsConfig(certificates: ClusterCertificates, host: string): Record<string, unknown> {
  const client = { serverName: host, rootCaFiles: [certificates.caFile] };
  return {
    frontend: {
      server: { ...certificates.server, requireClientAuth: true, clientCaFiles: [certificates.caFile] },
      client,
    },
    systemWorker: { ...certificates.client, client },
  };
}

/** A search attribute type of temporal-dev.yaml, as the operator API names it. */
const indexedValueTypes: Record<string, (typeof proto.api.enums.v1.IndexedValueType)[keyof typeof proto.api.enums.v1.IndexedValueType]> = {
  Keyword: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Text: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Int: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KeywordList: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

function requireClusterTool(name: 'server' | 'sql'): string {
  const file = path.join(clusterToolsDir, 'bin', name);
  if (!existsSync(file))
    throw new Error(`${file} is missing: run \`bash scripts/temporal-cluster-deps.sh\` (it builds the Temporal server from the Go module proxy)`);
  return file;
}

/** The server's config: PostgreSQL persistence and visibility, every service on `host`, no HTTP API, no metrics listener. */
function clusterConfig(options: TemporalClusterOptions, dynamicConfigFile: string, certificates: ClusterCertificates): Record<string, unknown> {
  const url = new URL(options.postgresUrl);
  const databases = options.databases ?? { main: 'temporal', visibility: 'temporal_visibility' };
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${url.hostname}:${url.port || 5432}`,
      connectProtocol: 'tcp',
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number) => ({ rpc: { grpcPort, membershipPort, bindOnIP: options.host } });
  const { ports } = options;
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: 4,
      datastores: { 'postgres-default': store(databases.main, 20), 'postgres-visibility': store(databases.visibility, 4) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: options.host }, tls: clusterTlsConfig(certificates, options.host) },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `${options.host}:${ports.frontend}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
}

/** Temporal's dynamic config file: each key's value for every namespace and task queue. */
function clusterDynamicConfig(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, [{ value, constraints: {} }]]));
}

/**
 * Temporal's databases at the schema of this server release: create-database, setup-schema
 * -v 0.0 and update-schema through the versioned files, by Temporal's SQL tool. A database
 * already set up is only updated, so a second start reuses the data.
 */
async function setupClusterSchema(postgresUrl: string, databases = { main: 'temporal', visibility: 'temporal_visibility' }): Promise<void> {
  const sql = requireClusterTool('sql');
  const url = new URL(postgresUrl);
  const connection = ['--plugin', 'postgres12', '--ep', url.hostname, '--port', url.port || '5432', '--user', decodeURIComponent(url.username)];
  // The password by the tool's environment variable, never on its command line: argv shows in
  // `ps`, and a failed run's error quotes the command.
  const env = { ...process.env, ...(url.password ? { SQL_PASSWORD: decodeURIComponent(url.password) } : {}) };
  for (const [database, schema] of [
    [databases.main, 'temporal'],
    [databases.visibility, 'visibility'],
  ] as const) {
    const tool = (...args: string[]) => run(sql, [...connection, '--db', database, ...args], { env });
    try {
      if (!(await databaseExists(postgresUrl, database))) {
        await tool('create-database');
        await tool('setup-schema', '-v', '0.0');
      }
      await tool('update-schema', '-d', path.join(clusterToolsDir, 'schema', 'postgresql', 'v12', schema, 'versioned'));
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr ?? '';
      throw new Error(`Temporal's SQL tool failed on database ${database}: ${(err as Error).message}\n${stderr.slice(-2000)}`);
    }
  }
}

/** Creates the namespace (unless there) and the search attributes it lacks, then waits until a visibility query on them answers. */
async function registerNamespace(
  connection: Connection,
  options: Pick<TemporalClusterOptions, 'namespace' | 'searchAttributes' | 'retentionDays'>,
): Promise<void> {
  const { namespace } = options;
  const described = await connection.workflowService.describeNamespace({ namespace }).catch((err: { code?: number }) => {
    if (err.code === 5) return undefined; // NOT_FOUND
    throw err;
  });
  if (!described)
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(`${options.retentionDays ?? 3} days`),
    });
  // The frontend learns of a new namespace at its next namespace-cache refresh (seconds): until then it says NOT_FOUND.
  const registered = await retry(() => connection.operatorService.listSearchAttributes({ namespace }));
  const missing = Object.entries(options.searchAttributes).filter(([name]) => !(name in (registered.customAttributes ?? {})));
  if (missing.length > 0) {
    const searchAttributes = Object.fromEntries(
      missing.map(([name, type]) => {
        const indexed = indexedValueTypes[type];
        if (indexed === undefined) throw new Error(`search attribute ${name}: type ${type} is not one of ${Object.keys(indexedValueTypes).join(', ')}`);
        return [name, indexed];
      }),
    );
    await retry(() => connection.operatorService.addSearchAttributes({ namespace, searchAttributes }));
  }
  const probe = Object.keys(options.searchAttributes)
    .map((name) => `${name} = "probe"`)
    .join(' AND ');
  await retry(() => connection.workflowService.countWorkflowExecutions({ namespace, ...(probe ? { query: probe } : {}) }));
}

async function retry<T>(call: () => Promise<T>, deadlineMs = 60_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (Date.now() - started > deadlineMs) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Sets up the schema, starts the server on it, and registers the namespace and its search attributes. */
export async function startTemporalCluster(options: TemporalClusterOptions): Promise<TemporalCluster> {
  const binary = requireClusterTool('server');
  await setupClusterSchema(options.postgresUrl, options.databases);
  const configDir = path.join(options.dir, 'config');
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  const dynamicConfigFile = path.join(options.dir, 'dynamic-config.yaml');
  writeFileSync(dynamicConfigFile, stringify(clusterDynamicConfig(options.dynamicConfig)));
  const certificates = clusterCertificates(path.join(options.dir, 'tls'), options.host);
  // It holds the database password: the owner's alone.
  writeFileSync(path.join(configDir, 'cluster.yaml'), stringify(clusterConfig(options, dynamicConfigFile, certificates)), { mode: 0o600 });
  const address = `${options.host}:${options.ports.frontend}`;
  const clientTls: TemporalTlsSettings = { caFile: certificates.caFile, clientCertificate: certificates.client };
  const logFile = path.join(options.dir, 'temporal.log');
  const server = await spawnTemporalServer({
    binary,
    // No authorizer: the frontend serves the control plane on a private address (docs/operations.md); agents reach Temporal through the gateway only.
    args: ['--root', options.dir, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
    frontend: temporalConnectionOptions({ address, tls: clientTls }),
    logFile,
    ready: (connection) => registerNamespace(connection, options),
    deadlineMs: 120_000,
  });
  return { ...server, address, namespace: options.namespace, logFile, clientTls };
}
