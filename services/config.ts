// The dev stack's settings: temporal-dev.yaml, then environment variables on top.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';
import { IronflowError } from '../core/errors';
import type { UserDataConfig } from '../core/userdata/config';
import { userDataSettings } from '../core/userdata/settings';

/** How many machines of one site boot into the ramdisk at a time unless configured (Metal3 provisions 20 at a time). */
const DEFAULT_BOOT_SLOTS = 50;
const MAX_BOOT_SLOTS = 10_000;
/** API processes sharing the API's port (api.processes): far more than the cores of any one host. */
const MAX_API_PROCESSES = 64;
/** Partitions of a dev-server task queue: the dev server is one host, so more than Temporal's default 4 buys nothing. */
const MAX_TASK_QUEUE_PARTITIONS = 16;

export const configFileSchema = z.object({
  dataDir: z.string().default('.ironflow'),
  temporal: z.object({
    address: z.string().default('127.0.0.1:7233'),
    uiPort: z.number().int().default(8233),
    namespace: z.string().default('default'),
    dbFile: z.string().default('temporal.db'),
    searchAttributes: z.record(z.string(), z.enum(['Keyword', 'Text', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList'])).default({}),
    dynamicConfig: z
      .record(z.string(), z.json())
      .refine((values) => !Object.keys(values).some((key) => key.startsWith('matching.numTaskqueue')), {
        message: 'set task queue partitions with temporal.taskQueuePartitions, which keeps a store from stranding tasks (stack/task-queue-partitions.ts)',
      })
      .default({}),
    /** Partitions of each task queue on the dev server (stack/task-queue-partitions.ts); Temporal's default is 4. */
    taskQueuePartitions: z.number().int().min(1).max(MAX_TASK_QUEUE_PARTITIONS).default(4),
    // The pragmas the dev server's SQLite plugin takes.
    sqlitePragmas: z
      .object({ journal_mode: z.enum(['delete', 'truncate', 'persist', 'memory', 'wal', 'off']), synchronous: z.enum(['off', 'normal', 'full', 'extra']) })
      .partial()
      .strict()
      .default({}),
    sealHistories: z.boolean().default(true),
    /** TLS to the frontend (docs/operations.md); the files are read and checked at start by services/temporal/connection-options.ts. */
    tls: z
      .object({ caFile: z.string().min(1), certFile: z.string().min(1), keyFile: z.string().min(1), serverName: z.string().min(1) })
      .partial()
      .strict()
      .optional(),
  }),
  api: z.object({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().default(8080),
    /** Processes serving the API on its one port (stack/api-processes.ts). */
    processes: z.number().int().min(1).max(MAX_API_PROCESSES).default(1),
    /** HTTPS for the API (services/api-tls.ts reads and checks the files at start). */
    tls: z
      .object({ certFile: z.string().min(1), keyFile: z.string().min(1) })
      .strict()
      .optional(),
  }),
  /** The agent gateway: where agents reach Temporal (gateway/). */
  gateway: z.object({ host: z.string().default('127.0.0.1'), port: z.number().int().default(7243) }).default({ host: '127.0.0.1', port: 7243 }),
  worker: z.object({ controlQueue: z.string().default('ironflow.control') }),
  metrics: z.object({ temporalSdkAddress: z.string().optional(), workerAddress: z.string().optional() }).default({}),
  database: z.object({ sqliteFile: z.string().default('ironflow.db') }),
  provisioning: z
    .object({ bootSlotsPerSite: z.number().int().min(1).max(MAX_BOOT_SLOTS).default(DEFAULT_BOOT_SLOTS) })
    .strict()
    .default({ bootSlotsPerSite: DEFAULT_BOOT_SLOTS }),
  /** Checked by core/userdata/settings.ts (it names the key and the fix). */
  userData: z.unknown().optional(),
});

export interface IronflowConfig {
  /** The repository root: relative paths of the config resolve against it. */
  root: string;
  dataDir: string;
  temporal: {
    address: string;
    uiPort: number;
    namespace: string;
    dbFile: string;
    searchAttributes: Record<string, string>;
    dynamicConfig: Record<string, unknown>;
    /** temporal.taskQueuePartitions or IRONFLOW_TEMPORAL_TASK_QUEUE_PARTITIONS: partitions of each task queue on the dev server (1 in temporal-dev.yaml). */
    taskQueuePartitions: number;
    /** The dev server's SQLite store pragmas (`--sqlite-pragma`); WAL in temporal-dev.yaml. */
    sqlitePragmas: Record<string, string>;
    /**
     * Seal the control plane's payloads (AES-256-GCM, docs/sealed-histories.md): what Temporal
     * stores is ciphertext (IRONFLOW_SEAL_HISTORIES; on in temporal-dev.yaml). Agents hold no
     * history key: the agent gateway seals and unseals their payloads for them.
     */
    sealHistories: boolean;
    /** temporal.tls or IRONFLOW_TEMPORAL_TLS_*: every control-plane connection to the frontend uses TLS with these (absolute paths); unset, plain gRPC. */
    tls?: TemporalTlsSettings;
  };
  api: {
    host: string;
    port: number;
    /** https://… when tls is set. */
    publicUrl: string;
    /** api.processes or IRONFLOW_API_PROCESSES: how many processes serve the API on its port (stack/api-processes.ts); 1, the control plane's own. */
    processes: number;
    /** IRONFLOW_API_CHECK_RESPONSES: every answer is checked by its zod schema too (api/response-serializer.ts); on in the test suite. */
    checkResponses: boolean;
    /** api.tls or IRONFLOW_API_TLS_CERT / IRONFLOW_API_TLS_KEY: the API serves HTTPS with these (absolute paths). */
    tls?: { certFile: string; keyFile: string };
  };
  /** The agent gateway (IRONFLOW_GATEWAY_HOST / IRONFLOW_GATEWAY_PORT), the only door from agents to Temporal. */
  gateway: {
    host: string;
    port: number;
    /** The address Join hands to agents (IRONFLOW_AGENT_GATEWAY_ADDRESS): where machines on a site's network reach the gateway; unset, the address it bound. */
    agentAddress?: string;
  };
  controlQueue: string;
  metrics: {
    /** Where the Temporal SDK's worker metrics are exported (Prometheus); GET /metrics appends them. */
    temporalSdkAddress?: string;
    /** Where a control-plane worker process of its own (stack/control-plane-worker.ts) serves its GET /metrics; the cluster profile's worker N on the port N − 1 above it. */
    workerAddress?: string;
  };
  /** DATABASE_URL when set (postgres://…), else the SQLite file in the data dir. */
  databaseUrl: string;
  /** The discovery attestor's approval mode (IRONFLOW_DISCOVERY_APPROVAL): never, unknown-machines, always. */
  discoveryApproval: 'never' | 'unknown-machines' | 'always';
  /**
   * provisioning.bootSlotsPerSite or IRONFLOW_BOOT_SLOTS_PER_SITE: a run that PXE-boots a
   * machine into the ramdisk holds one of its site's slots until the run ends; the others
   * queue in their workflows (services/boot-slots/), so a large fleet is never refused.
   */
  provisioning: { bootSlotsPerSite: number };
  /** userdata.render's settings (temporal-dev.yaml `userData:`, IRONFLOW_AGENT_URL …), checked at start. */
  userData: UserDataConfig;
}

/** TLS to the Temporal frontend: its CA (omitted: the system's roots), a client certificate (both files or neither), a name to verify instead of the address's host. */
export interface TemporalTlsSettings {
  caFile?: string;
  clientCertificate?: { certFile: string; keyFile: string };
  serverName?: string;
}

export const repoRoot = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new Error(`${name}=${raw} is not a port number (0-65535)`);
  }
  return value;
}

/** `host:port` (a name, an IPv4 address or a bracketed IPv6 one), as agents dial it; anything else is refused at start, not when the first agent fails to connect. */
function hostAndPort(raw: string, name: string): string {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535) throw new Error(`${name}=${raw.slice(0, 100)} is not host:port (e.g. 10.0.0.5:7243)`);
  return raw;
}

function envBoolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new Error(`${name}=${raw} is not true or false`);
}

/** Both files or neither, from the environment over the file's api.tls; relative paths resolve against the repository root. */
function apiTlsFrom(env: NodeJS.ProcessEnv, fromFile: { certFile: string; keyFile: string } | undefined): IronflowConfig['api']['tls'] {
  const certFile = env.IRONFLOW_API_TLS_CERT || fromFile?.certFile;
  const keyFile = env.IRONFLOW_API_TLS_KEY || fromFile?.keyFile;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    const missing = certFile ? 'IRONFLOW_API_TLS_KEY (api.tls.keyFile)' : 'IRONFLOW_API_TLS_CERT (api.tls.certFile)';
    throw new IronflowError('INVALID_CONFIG', `the API's TLS needs a certificate and its key: set ${missing} too, or neither for plain http on loopback`, {
      path: 'api.tls',
    });
  }
  return { certFile: path.resolve(repoRoot, certFile), keyFile: path.resolve(repoRoot, keyFile) };
}

/** The environment over the file's temporal.tls; a client certificate is both files or neither; relative paths resolve against the repository root. */
function temporalTlsFrom(env: NodeJS.ProcessEnv, fromFile: z.infer<typeof configFileSchema>['temporal']['tls']): TemporalTlsSettings | undefined {
  const caFile = env.IRONFLOW_TEMPORAL_TLS_CA || fromFile?.caFile;
  const certFile = env.IRONFLOW_TEMPORAL_TLS_CERT || fromFile?.certFile;
  const keyFile = env.IRONFLOW_TEMPORAL_TLS_KEY || fromFile?.keyFile;
  const serverName = env.IRONFLOW_TEMPORAL_TLS_SERVER_NAME || fromFile?.serverName;
  if (!caFile && !certFile && !keyFile && !serverName) return undefined;
  if (Boolean(certFile) !== Boolean(keyFile)) {
    const missing = certFile ? 'IRONFLOW_TEMPORAL_TLS_KEY (temporal.tls.keyFile)' : 'IRONFLOW_TEMPORAL_TLS_CERT (temporal.tls.certFile)';
    throw new IronflowError(
      'INVALID_CONFIG',
      `the client certificate for Temporal needs a certificate and its key: set ${missing} too, or neither for TLS without a client certificate`,
      { path: 'temporal.tls' },
    );
  }
  return {
    ...(caFile ? { caFile: path.resolve(repoRoot, caFile) } : {}),
    ...(certFile && keyFile ? { clientCertificate: { certFile: path.resolve(repoRoot, certFile), keyFile: path.resolve(repoRoot, keyFile) } } : {}),
    ...(serverName ? { serverName } : {}),
  };
}

/** temporal.tls as the IRONFLOW_TEMPORAL_TLS_* variables: how a process started by another gets it (the cluster profile's workers). */
export function temporalTlsEnv(tls: TemporalTlsSettings): Record<string, string> {
  return {
    ...(tls.caFile ? { IRONFLOW_TEMPORAL_TLS_CA: tls.caFile } : {}),
    ...(tls.clientCertificate ? { IRONFLOW_TEMPORAL_TLS_CERT: tls.clientCertificate.certFile, IRONFLOW_TEMPORAL_TLS_KEY: tls.clientCertificate.keyFile } : {}),
    ...(tls.serverName ? { IRONFLOW_TEMPORAL_TLS_SERVER_NAME: tls.serverName } : {}),
  };
}

/** A whole number from `min` to `max`: the variable `name` over the file's value. */
function wholeNumberFrom(env: NodeJS.ProcessEnv, name: string, fromFile: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fromFile;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name}=${raw.slice(0, 20)} is not a whole number from ${min} to ${max}`);
  }
  return value;
}

function discoveryApprovalFrom(raw: string | undefined): IronflowConfig['discoveryApproval'] {
  if (raw === undefined || raw === '') return 'never';
  if (raw === 'never' || raw === 'unknown-machines' || raw === 'always') return raw;
  throw new Error(`IRONFLOW_DISCOVERY_APPROVAL=${raw} is not one of never, unknown-machines, always`);
}

/** An address to bind (host:port), or undefined for `off` (or empty). */
function addressOrOff(raw: string | undefined, name: string): string | undefined {
  return !raw || raw === 'off' ? undefined : hostAndPort(raw, name);
}

function metricsSettings(sdkAddress: string | undefined, workerAddress: string | undefined): IronflowConfig['metrics'] {
  const sdk = addressOrOff(sdkAddress, 'IRONFLOW_METRICS_SDK_ADDRESS');
  const worker = addressOrOff(workerAddress, 'IRONFLOW_METRICS_WORKER_ADDRESS');
  return { ...(sdk ? { temporalSdkAddress: sdk } : {}), ...(worker ? { workerAddress: worker } : {}) };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): IronflowConfig {
  const file = path.join(repoRoot, 'temporal-dev.yaml');
  const parsed = configFileSchema.safeParse(parse(readFileSync(file, 'utf8')) ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`temporal-dev.yaml: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const doc = parsed.data;
  const dataDir = path.resolve(repoRoot, env.IRONFLOW_DATA_DIR || doc.dataDir);
  const host = env.IRONFLOW_API_HOST || doc.api.host;
  const port = envInt(env, 'IRONFLOW_API_PORT', doc.api.port);
  const sqliteFile = path.resolve(dataDir, env.IRONFLOW_SQLITE_FILE || doc.database.sqliteFile);
  const tls = apiTlsFrom(env, doc.api.tls);
  const temporalTls = temporalTlsFrom(env, doc.temporal.tls);
  const publicUrl = env.IRONFLOW_API_URL || `${tls ? 'https' : 'http'}://${host}:${port}`;
  return {
    root: repoRoot,
    dataDir,
    temporal: {
      address: env.IRONFLOW_TEMPORAL_ADDRESS || doc.temporal.address,
      uiPort: envInt(env, 'IRONFLOW_TEMPORAL_UI_PORT', doc.temporal.uiPort),
      namespace: env.IRONFLOW_TEMPORAL_NAMESPACE || doc.temporal.namespace,
      dbFile: path.resolve(dataDir, env.IRONFLOW_TEMPORAL_DB_FILE || doc.temporal.dbFile),
      searchAttributes: doc.temporal.searchAttributes,
      dynamicConfig: doc.temporal.dynamicConfig as Record<string, unknown>,
      taskQueuePartitions: wholeNumberFrom(env, 'IRONFLOW_TEMPORAL_TASK_QUEUE_PARTITIONS', doc.temporal.taskQueuePartitions, 1, MAX_TASK_QUEUE_PARTITIONS),
      sqlitePragmas: doc.temporal.sqlitePragmas,
      sealHistories: envBoolean(env, 'IRONFLOW_SEAL_HISTORIES', doc.temporal.sealHistories),
      ...(temporalTls ? { tls: temporalTls } : {}),
    },
    api: {
      host,
      port,
      publicUrl,
      processes: wholeNumberFrom(env, 'IRONFLOW_API_PROCESSES', doc.api.processes, 1, MAX_API_PROCESSES),
      checkResponses: envBoolean(env, 'IRONFLOW_API_CHECK_RESPONSES', false),
      ...(tls ? { tls } : {}),
    },
    gateway: {
      host: env.IRONFLOW_GATEWAY_HOST || doc.gateway.host,
      port: envInt(env, 'IRONFLOW_GATEWAY_PORT', doc.gateway.port),
      ...(env.IRONFLOW_AGENT_GATEWAY_ADDRESS ? { agentAddress: hostAndPort(env.IRONFLOW_AGENT_GATEWAY_ADDRESS, 'IRONFLOW_AGENT_GATEWAY_ADDRESS') } : {}),
    },
    controlQueue: env.IRONFLOW_CONTROL_QUEUE || doc.worker.controlQueue,
    metrics: metricsSettings(
      env.IRONFLOW_METRICS_SDK_ADDRESS ?? doc.metrics.temporalSdkAddress,
      env.IRONFLOW_METRICS_WORKER_ADDRESS ?? doc.metrics.workerAddress,
    ),
    databaseUrl: env.DATABASE_URL || `file:${sqliteFile}`,
    discoveryApproval: discoveryApprovalFrom(env.IRONFLOW_DISCOVERY_APPROVAL),
    provisioning: { bootSlotsPerSite: wholeNumberFrom(env, 'IRONFLOW_BOOT_SLOTS_PER_SITE', doc.provisioning.bootSlotsPerSite, 1, MAX_BOOT_SLOTS) },
    userData: userDataSettings(doc.userData, env, publicUrl),
  };
}
