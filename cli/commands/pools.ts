// `ironflow pools create|get|list|update|delete`. Policy fields are flags of their own;
// --policy takes the whole policy as JSON instead.
import { z } from 'zod';
import { IronflowError, parseWith } from '../../core/errors';
import { idempotencyKeySchema, idOf, labelKeySchema, tenantIdSchema } from '../../core/schemas/common';
import { imageRefSchema, poolClassSchema, poolPolicyPatchSchema, type PoolView } from '../../core/schemas/pools';
import { ROOT_TENANT } from '../../core/permissions';
import { defineCommand } from '../command';

const tenant = tenantIdSchema.default(ROOT_TENANT);
const policyFlags = {
  policy: z.string().optional(),
  hardwareProfile: labelKeySchema.optional(),
  prewarmImage: z.array(imageRefSchema).optional(),
  trustProvisioningNetwork: z.boolean().optional(),
  agent: poolPolicyPatchSchema.shape.agent,
};
type PolicyFlags = { policy?: string; hardwareProfile?: string; prewarmImage?: string[]; trustProvisioningNetwork?: boolean; agent?: 'ironflow' | 'none' };

/** The policy fields the flags give (undefined when none): --policy JSON first, single flags on top. */
function policyFrom(flags: PolicyFlags): Record<string, unknown> | undefined {
  let base: Record<string, unknown> = {};
  if (flags.policy !== undefined) {
    try {
      base = JSON.parse(flags.policy) as Record<string, unknown>;
    } catch {
      throw new IronflowError('INVALID_INPUT', '--policy: not JSON (e.g. --policy \'{"agent":"none"}\')', { path: 'policy' });
    }
  }
  const fields = {
    ...base,
    ...(flags.hardwareProfile !== undefined ? { hardwareProfile: flags.hardwareProfile } : {}),
    ...(flags.prewarmImage !== undefined ? { prewarmImages: flags.prewarmImage } : {}),
    ...(flags.trustProvisioningNetwork !== undefined ? { trustProvisioningNetwork: flags.trustProvisioningNetwork } : {}),
    ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
  };
  if (Object.keys(fields).length === 0) return undefined;
  return parseWith(poolPolicyPatchSchema, fields);
}

const poolColumns = [
  { header: 'id', value: (p: Record<string, unknown>) => p.id },
  { header: 'site', value: (p: Record<string, unknown>) => p.siteId },
  { header: 'class', value: (p: Record<string, unknown>) => p.class },
  { header: 'agent', value: (p: Record<string, unknown>) => (p.policy as { agent?: string }).agent },
  { header: 'version', value: (p: Record<string, unknown>) => p.version },
];

const poolsCreateCommand = defineCommand({
  name: 'pools create',
  summary:
    'Create a pool: --tenant T --site S --class C [--hardware-profile P] [--prewarm-image name@v]… [--trust-provisioning-network] [--agent ironflow|none] [--key K]',
  flags: z.object({ tenantId: tenant, siteId: idOf('site'), class: poolClassSchema, key: idempotencyKeySchema.optional(), ...policyFlags }),
  run: (ctx, input) =>
    ctx.api.call('POST', '/v1/pools', {
      tenantId: input.tenantId,
      siteId: input.siteId,
      class: input.class,
      policy: policyFrom(input) ?? {},
      idempotencyKey: input.key,
    }),
});

const poolsGetCommand = defineCommand({
  name: 'pools get',
  summary: 'Show a pool: ironflow pools get POOL --tenant T',
  flags: z.object({ poolId: idOf('pool'), tenantId: tenant }),
  positionals: ['poolId'],
  run: (ctx, input) => ctx.api.call('GET', `/v1/pools/${input.poolId}?tenantId=${encodeURIComponent(input.tenantId)}`),
});

const poolsListCommand = defineCommand({
  name: 'pools list',
  summary: "The tenant's pools: ironflow pools list --tenant T [--site S]",
  flags: z.object({ tenantId: tenant, siteId: idOf('site').optional() }),
  run: async (ctx, input) => {
    const query = new URLSearchParams({ tenantId: input.tenantId, ...(input.siteId ? { siteId: input.siteId } : {}) });
    return (await ctx.api.call<{ pools: PoolView[] }>('GET', `/v1/pools?${query}`)).pools;
  },
  table: { columns: poolColumns },
});

const poolsUpdateCommand = defineCommand({
  name: 'pools update',
  summary: 'Change a pool: ironflow pools update POOL [--class C] [policy flags] [--version N]',
  flags: z.object({ poolId: idOf('pool'), tenantId: tenant, class: poolClassSchema.optional(), version: z.number().int().min(1).optional(), ...policyFlags }),
  positionals: ['poolId'],
  run: (ctx, input) =>
    ctx.api.call('PATCH', `/v1/pools/${input.poolId}`, { tenantId: input.tenantId, class: input.class, version: input.version, policy: policyFrom(input) }),
});

const poolsDeleteCommand = defineCommand({
  name: 'pools delete',
  summary: 'Delete a pool (refused while it has live nodes): ironflow pools delete POOL --tenant T',
  flags: z.object({ poolId: idOf('pool'), tenantId: tenant }),
  positionals: ['poolId'],
  run: (ctx, { poolId, tenantId }) => ctx.api.call('DELETE', `/v1/pools/${poolId}?tenantId=${encodeURIComponent(tenantId)}`),
});

export const poolCommands = [poolsCreateCommand, poolsGetCommand, poolsListCommand, poolsUpdateCommand, poolsDeleteCommand];
