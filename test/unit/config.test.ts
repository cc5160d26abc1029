import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFileSchema, loadConfig, repoRoot } from '../../services/config';

describe('the dev stack config', () => {
  it('reads temporal-dev.yaml', () => {
    const config = loadConfig({});
    expect(config.temporal.address).toBe('127.0.0.1:7233');
    expect(config.temporal.uiPort).toBe(8233);
    expect(config.api.port).toBe(8080);
    expect(config.dataDir).toBe(path.join(repoRoot, '.ironflow'));
    expect(Object.keys(config.temporal.searchAttributes).sort()).toEqual(['NodeId', 'ProfileRef', 'ProvisionState', 'SiteId', 'TenantId']);
    expect(config.databaseUrl).toBe(`file:${path.join(repoRoot, '.ironflow', 'ironflow.db')}`);
  });

  it('lets the environment override it', () => {
    const config = loadConfig({
      IRONFLOW_API_PORT: '9090',
      IRONFLOW_TEMPORAL_ADDRESS: '127.0.0.1:7999',
      IRONFLOW_DATA_DIR: '/tmp/x',
      DATABASE_URL: 'postgres://u@h/db',
    });
    expect(config.api.port).toBe(9090);
    expect(config.temporal.address).toBe('127.0.0.1:7999');
    expect(config.dataDir).toBe('/tmp/x');
    expect(config.databaseUrl).toBe('postgres://u@h/db');
  });

  it('refuses a port that is not one, naming the variable', () => {
    expect(() => loadConfig({ IRONFLOW_API_PORT: 'eighty' })).toThrow(/IRONFLOW_API_PORT/);
  });

  it("takes the agent gateway's address for agents only as host:port", () => {
    expect(loadConfig({ IRONFLOW_AGENT_GATEWAY_ADDRESS: '10.78.0.2:7243' }).gateway.agentAddress).toBe('10.78.0.2:7243');
    expect(loadConfig({ IRONFLOW_AGENT_GATEWAY_ADDRESS: '[fd00::2]:7243' }).gateway.agentAddress).toBe('[fd00::2]:7243');
    expect(loadConfig({}).gateway.agentAddress).toBeUndefined();
    for (const bad of ['10.78.0.2', 'https://10.78.0.2:7243', '10.78.0.2:0', '10.78.0.2:70000', 'host name:7243']) {
      expect(() => loadConfig({ IRONFLOW_AGENT_GATEWAY_ADDRESS: bad })).toThrow(/IRONFLOW_AGENT_GATEWAY_ADDRESS=.* is not host:port/);
    }
  });

  it("takes a site's boot slots from temporal-dev.yaml or IRONFLOW_BOOT_SLOTS_PER_SITE, a whole number from 1", () => {
    expect(loadConfig({}).provisioning.bootSlotsPerSite).toBe(50);
    expect(loadConfig({ IRONFLOW_BOOT_SLOTS_PER_SITE: '4' }).provisioning.bootSlotsPerSite).toBe(4);
    for (const bad of ['0', '-1', '2.5', 'many', '10001']) {
      expect(() => loadConfig({ IRONFLOW_BOOT_SLOTS_PER_SITE: bad })).toThrow(/IRONFLOW_BOOT_SLOTS_PER_SITE=.* is not a whole number from 1 to 10000/);
    }
  });

  it("takes the dev server's task queue partitions from temporal-dev.yaml or IRONFLOW_TEMPORAL_TASK_QUEUE_PARTITIONS, a whole number from 1 to 16", () => {
    expect(loadConfig({}).temporal.taskQueuePartitions).toBe(1);
    expect(loadConfig({ IRONFLOW_TEMPORAL_TASK_QUEUE_PARTITIONS: '4' }).temporal.taskQueuePartitions).toBe(4);
    for (const bad of ['0', '2.5', 'four', '17']) {
      expect(() => loadConfig({ IRONFLOW_TEMPORAL_TASK_QUEUE_PARTITIONS: bad })).toThrow(
        /IRONFLOW_TEMPORAL_TASK_QUEUE_PARTITIONS=.* is not a whole number from 1 to 16/,
      );
    }
  });

  it('refuses partitions set as dynamic config, which would pass by the guard that keeps a store from stranding tasks', () => {
    const file = (dynamicConfig: Record<string, unknown>) => ({ temporal: { dynamicConfig }, api: {}, worker: {}, database: {} });
    expect(configFileSchema.safeParse(file({ 'frontend.namespaceCount': 10 })).success).toBe(true);
    const refused = configFileSchema.safeParse(file({ 'matching.numTaskqueueReadPartitions': 1 }));
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]).toMatchObject({ path: ['temporal', 'dynamicConfig'], message: expect.stringMatching(/temporal\.taskQueuePartitions/) });
  });

  it('takes the API processes from temporal-dev.yaml or IRONFLOW_API_PROCESSES, a whole number from 1 to 64', () => {
    expect(loadConfig({}).api.processes).toBe(1);
    expect(loadConfig({ IRONFLOW_API_PROCESSES: '2' }).api.processes).toBe(2);
    for (const bad of ['0', '-1', '1.5', 'all', '65']) {
      expect(() => loadConfig({ IRONFLOW_API_PROCESSES: bad })).toThrow(/IRONFLOW_API_PROCESSES=.* is not a whole number from 1 to 64/);
    }
  });

  it("takes the metrics addresses (the SDK's exporter, a worker process's own) as host:port, or off", () => {
    expect(loadConfig({}).metrics).toEqual({ temporalSdkAddress: '127.0.0.1:9464', workerAddress: '127.0.0.1:9470' });
    expect(loadConfig({ IRONFLOW_METRICS_SDK_ADDRESS: 'off', IRONFLOW_METRICS_WORKER_ADDRESS: '[::1]:9555' }).metrics).toEqual({ workerAddress: '[::1]:9555' });
    expect(loadConfig({ IRONFLOW_METRICS_WORKER_ADDRESS: 'off' }).metrics).toEqual({ temporalSdkAddress: '127.0.0.1:9464' });
    expect(() => loadConfig({ IRONFLOW_METRICS_WORKER_ADDRESS: '9470' })).toThrow(/IRONFLOW_METRICS_WORKER_ADDRESS=9470 is not host:port/);
  });
});
