// Joining once: with no identity in data_dir, the agent sends the site token and a CSR for
// its key to POST /v1/join and stores the answer. With one, it does not join again (a
// restart keeps its node id). The token is read, sent, and never logged or stored.
import { existsSync, readFileSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { IronflowError } from '../../core/errors';
import { buildCsr } from '../../services/pki/csr-builder';
import type { JoinAnswer } from '../../core/schemas/join';
import type { SiteAgentConfig } from './config';
import type { ControlPlaneClient } from '../common/control-plane-client';
import { identityOf, loadIdentity, persistIdentity, type AgentIdentity } from '../common/identity';
import type { AgentLog } from '../common/log';

function readJoinToken(config: SiteAgentConfig, env: NodeJS.ProcessEnv): string {
  const fromEnv = env.IRONFLOW_JOIN_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  if (config.tokenFile) {
    if (!existsSync(config.tokenFile))
      throw new IronflowError(
        'INVALID_CONFIG',
        `token_file ${config.tokenFile} does not exist; write the site token there (ironflow site-tokens create --out FILE)`,
        { path: 'token_file' },
      );
    const token = readFileSync(config.tokenFile, 'utf8').trim();
    if (token) return token;
  }
  throw new IronflowError(
    'INVALID_CONFIG',
    'this agent has not joined yet and has no site token: set IRONFLOW_JOIN_TOKEN or token_file (ironflow site-tokens create --out FILE)',
    { path: 'token_file' },
  );
}

export async function ensureJoined(
  config: SiteAgentConfig,
  key: KeyObject,
  client: ControlPlaneClient,
  log: AgentLog,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AgentIdentity> {
  const existing = loadIdentity(config.dataDir, key);
  if (existing) {
    log.info('identity loaded; not joining again', { nodeId: existing.current.nodeId, siteId: existing.current.siteId });
    return existing;
  }
  const token = readJoinToken(config, env);
  const csr = await buildCsr(key, 'ironflow-site-agent');
  const issuedAt = new Date().toISOString();
  const answer = await client.join({ token, csr });
  if (answer.role !== 'site') {
    throw new IronflowError(
      'INVALID_CONFIG',
      `the token joined this agent as role ${answer.role}; a site agent needs a site token (ironflow site-tokens create)`,
    );
  }
  const identity = identityOf(
    config.dataDir,
    key,
    { nodeId: answer.nodeId, role: answer.role, siteId: answer.siteId, temporal: answer.temporal, issuedAt, expiresAt: answer.expiresAt },
    answer.certificateChain,
  );
  persistIdentity(identity);
  log.info('joined', { nodeId: answer.nodeId, siteId: answer.siteId, taskQueue: answer.temporal.taskQueue, expiresAt: answer.expiresAt });
  return identity;
}
