// The installed OS joins once: the provisioned token from --token-file and a CSR for the
// agent's key go to POST /v1/join with the node id it was installed for. The answer must be
// that node with role `node`, else nothing is stored. Once the identity is stored the token
// file is removed (the join unit runs only while it exists). A restart loads the identity
// and refuses a data dir that belongs to another node.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { caPinPattern } from '../../services/ca-pin';
import { requireTlsOffLoopback } from '../../services/control-plane-url';
import { IronflowError, parseWith } from '../../core/errors';
import { buildCsr } from '../../services/pki/csr-builder';
import type { JoinAnswer } from '../../core/schemas/join';
import { ControlPlaneClient } from '../common/control-plane-client';
import { writeFileDurably } from '../common/durable-file';
import { identityOf, loadIdentity, loadOrCreateKey, persistIdentity, type AgentIdentity } from '../common/identity';
import type { AgentLog } from '../common/log';

/** Where `ironflow agent node` finds its state when given no --data-dir. */
export const DEFAULT_NODE_DATA_DIR = '/var/lib/ironflow-node';
const SETTINGS_FILE = 'node-agent.json';

/** servingCaPin: the user data's --serving-ca-pin, kept for later starts (`agent node` is run without flags). */
const settingsSchema = z.object({ server: z.string().url(), nodeId: z.string(), servingCaPin: z.string().regex(caPinPattern).optional() }).strict();
type NodeAgentSettings = z.infer<typeof settingsSchema>;

interface JoinOptions {
  dataDir: string;
  server?: string;
  tokenFile?: string;
  nodeId?: string;
  /** The key pin of the CA the API's certificate chains to (sha256/…=): the only CA trusted for an https server. */
  servingCaPin?: string;
}

const PIN_HINT = "--serving-ca-pin sha256/… (the user data's pins: userData.pins or IRONFLOW_SERVING_CA_PIN on the control plane)";

/** The server and pin this start uses; plain http off loopback is refused before anything is sent. */
function checkedSettings(server: string, nodeId: string, servingCaPin: string | undefined): NodeAgentSettings {
  requireTlsOffLoopback(server, '--server', PIN_HINT);
  if (servingCaPin && !server.startsWith('https:')) {
    throw new IronflowError(
      'INVALID_CONFIG',
      "--serving-ca-pin is given but --server is not https: the pin is for the API's TLS certificate; give its https:// URL (userData.controlPlaneUrl)",
      { path: '--serving-ca-pin' },
    );
  }
  return { server, nodeId, ...(servingCaPin ? { servingCaPin } : {}) };
}

function loadSettings(dataDir: string): NodeAgentSettings | undefined {
  const file = path.join(dataDir, SETTINGS_FILE);
  return existsSync(file) ? parseWith(settingsSchema, JSON.parse(readFileSync(file, 'utf8')), 'INVALID_CONFIG') : undefined;
}

function refuseOtherNode(expected: string | undefined, actual: string, where: string): void {
  if (expected !== undefined && expected !== actual) {
    throw new IronflowError('PERMISSION_DENIED', `${where} is node ${actual}, but this OS was installed for ${expected}; refusing another identity`, {
      reason: 'node-mismatch',
    });
  }
}

/** The node's identity: loaded, or joined with the provisioned token. */
export async function ensureNodeJoined(options: JoinOptions, log: AgentLog): Promise<{ identity: AgentIdentity; settings: NodeAgentSettings }> {
  const key = loadOrCreateKey(options.dataDir);
  const existing = loadIdentity(options.dataDir, key);
  const stored = loadSettings(options.dataDir);
  if (existing && stored) {
    refuseOtherNode(options.nodeId, existing.current.nodeId, `the identity in ${options.dataDir}`);
    log.info('identity loaded; not joining again', { nodeId: existing.current.nodeId });
    if (options.tokenFile) rmSync(options.tokenFile, { force: true });
    return { identity: existing, settings: checkedSettings(options.server ?? stored.server, stored.nodeId, options.servingCaPin ?? stored.servingCaPin) };
  }
  if (!options.server || !options.tokenFile) {
    throw new IronflowError(
      'INVALID_CONFIG',
      `this node has not joined yet: give --server URL --token-file FILE and --node-id ID (the user data's join; no --node-id with an adopt token), or --data-dir of a joined node`,
      { path: 'tokenFile' },
    );
  }
  // No --node-id: a machine adopted with its own OS (an adopt token); the control plane names the new node.
  let settings = checkedSettings(options.server, options.nodeId ?? 'adopting', options.servingCaPin);
  if (!existsSync(options.tokenFile))
    throw new IronflowError('INVALID_CONFIG', `--token-file ${options.tokenFile} does not exist; the user data writes the provisioned token there`, {
      path: 'tokenFile',
    });
  const token = readFileSync(options.tokenFile, 'utf8').trim();
  const client = new ControlPlaneClient(settings.server, undefined, { caPin: settings.servingCaPin });
  const issuedAt = new Date().toISOString();
  const answer = await client.join({
    token,
    csr: await buildCsr(key, options.nodeId ?? 'adopting'),
    ...(options.nodeId ? { nodeId: options.nodeId } : {}),
  });
  refuseOtherNode(options.nodeId, answer.nodeId, "the control plane's answer");
  if (answer.role !== 'node')
    throw new IronflowError(
      'PERMISSION_DENIED',
      `the token joined this agent as role ${answer.role}; an installed OS joins with its provisioned token as role node`,
      { reason: 'role-mismatch' },
    );
  settings = { ...settings, nodeId: answer.nodeId };
  const identity = identityOf(
    options.dataDir,
    key,
    { nodeId: answer.nodeId, role: answer.role, siteId: answer.siteId, temporal: answer.temporal, issuedAt, expiresAt: answer.expiresAt },
    answer.certificateChain,
  );
  persistIdentity(identity);
  writeFileDurably(path.join(options.dataDir, SETTINGS_FILE), `${JSON.stringify(settings, null, 2)}\n`, 0o644);
  rmSync(options.tokenFile, { force: true });
  log.info('joined as the installed node', { nodeId: answer.nodeId, taskQueue: answer.temporal.taskQueue, expiresAt: answer.expiresAt });
  return { identity, settings };
}
