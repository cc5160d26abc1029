// The user data settings of the control plane: temporal-dev.yaml's `userData:` section with
// environment overrides, checked once at start by checkUserDataConfig. A bad value is
// INVALID_CONFIG naming the key and where to fix it, so a bad URL never reaches a machine.
import { IronflowError, isIronflowError } from '../errors';
import { checkUserDataConfig, type UserDataConfig } from './config';

/** Environment variables that override `userData.<key>` (strings; the TTL is a number). */
export const userDataEnv = {
  controlPlaneUrl: 'IRONFLOW_USERDATA_CONTROL_PLANE_URL',
  agentUrl: 'IRONFLOW_AGENT_URL',
  agentSha256: 'IRONFLOW_AGENT_SHA256',
  tokenTtlSeconds: 'IRONFLOW_USERDATA_TOKEN_TTL_SECONDS',
  servingCaPin: 'IRONFLOW_SERVING_CA_PIN',
  joinSigningPin: 'IRONFLOW_JOIN_SIGNING_PIN',
  joinEncryptionPin: 'IRONFLOW_JOIN_ENCRYPTION_PIN',
} as const;

type Section = Record<string, unknown>;
const isSection = (v: unknown): v is Section => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The checked settings. controlPlaneUrl defaults to the API's public URL (IRONFLOW_API_URL);
 * the agent's download URL and digest have no default: the operator publishes the agent.
 */
export function userDataSettings(fileSection: unknown, env: NodeJS.ProcessEnv, publicUrl: string): UserDataConfig {
  const section: Section = isSection(fileSection) ? { ...fileSection } : {};
  const pins: Section = isSection(section.pins) ? { ...section.pins } : {};
  for (const key of ['controlPlaneUrl', 'agentUrl', 'agentSha256'] as const) {
    const value = env[userDataEnv[key]];
    if (value) section[key] = value;
  }
  for (const key of ['servingCaPin', 'joinSigningPin', 'joinEncryptionPin'] as const) {
    const value = env[userDataEnv[key]];
    if (value) pins[key] = value;
  }
  if (Object.keys(pins).length > 0) section.pins = pins;
  const ttl = env[userDataEnv.tokenTtlSeconds];
  if (ttl) section.tokenTtlSeconds = Number(ttl);
  section.controlPlaneUrl ??= publicUrl;
  try {
    return checkUserDataConfig(section);
  } catch (error) {
    if (!isIronflowError(error)) throw error;
    const path = String(error.details.path ?? 'userData');
    const key = path.split('.').at(-1) ?? '';
    const variable = (userDataEnv as Record<string, string>)[key];
    throw new IronflowError('INVALID_CONFIG', `${error.message} (fix it in temporal-dev.yaml's userData section${variable ? ` or ${variable}` : ''})`, {
      path,
    });
  }
}

/** Rendering needs the agent's download URL and digest: INVALID_CONFIG naming the missing key otherwise. */
export function requireAgentDownload(
  config: UserDataConfig,
): asserts config is UserDataConfig & { agentUrl: string; agentSha256: string; controlPlaneUrl: string } {
  for (const key of ['controlPlaneUrl', 'agentUrl', 'agentSha256'] as const) {
    if (config[key] === undefined) {
      throw new IronflowError(
        'INVALID_CONFIG',
        `userData.${key} is not configured: publish the node agent and set userData.${key} in temporal-dev.yaml or ${userDataEnv[key]}`,
        { path: `userData.${key}` },
      );
    }
  }
}
