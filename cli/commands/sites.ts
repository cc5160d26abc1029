// `ironflow sites create|get|list|update|delete`.
import { z } from 'zod';
import { idempotencyKeySchema, idOf, tenantIdSchema } from '../../core/schemas/common';
import { siteCreateFields, siteUpdateFields, type SiteView } from '../../core/schemas/sites';
import { ROOT_TENANT } from '../../core/permissions';
import { defineCommand } from '../command';

const tenant = tenantIdSchema.default(ROOT_TENANT);
const siteColumns = [
  { header: 'id', value: (s: Record<string, unknown>) => s.id },
  { header: 'kind', value: (s: Record<string, unknown>) => s.kind },
  { header: 'region', value: (s: Record<string, unknown>) => s.region },
  { header: 'iam region', value: (s: Record<string, unknown>) => s.iamRegion },
  { header: 'owner', value: (s: Record<string, unknown>) => s.ownerTenantId },
  { header: 'version', value: (s: Record<string, unknown>) => s.version },
];

const sitesCreateCommand = defineCommand({
  name: 'sites create',
  summary: 'Create a site: --tenant T --kind shared|dedicated|custom --region R [--iam-region I] --key K',
  flags: siteCreateFields.omit({ idempotencyKey: true }).extend({ tenantId: tenant, key: idempotencyKeySchema }),
  run: (ctx, { key, ...input }) => ctx.api.call('POST', '/v1/sites', { ...input, idempotencyKey: key }),
});

const sitesGetCommand = defineCommand({
  name: 'sites get',
  summary: 'Show a site: ironflow sites get SITE --tenant T',
  flags: z.object({ siteId: idOf('site'), tenantId: tenant }),
  positionals: ['siteId'],
  run: (ctx, input) => ctx.api.call('GET', `/v1/sites/${input.siteId}?tenantId=${encodeURIComponent(input.tenantId)}`),
});

const sitesListCommand = defineCommand({
  name: 'sites list',
  summary: "The tenant's sites: ironflow sites list --tenant T",
  flags: z.object({ tenantId: tenant }),
  run: async (ctx, input) => (await ctx.api.call<{ sites: SiteView[] }>('GET', `/v1/sites?tenantId=${encodeURIComponent(input.tenantId)}`)).sites,
  table: { columns: siteColumns },
});

const sitesUpdateCommand = defineCommand({
  name: 'sites update',
  summary: 'Change a site: ironflow sites update SITE [--region R] [--iam-region I | --clear-iam-region] [--version N]',
  flags: siteUpdateFields.extend({ siteId: idOf('site'), tenantId: tenant }),
  positionals: ['siteId'],
  run: (ctx, { siteId, ...input }) => ctx.api.call('PATCH', `/v1/sites/${siteId}`, input),
});

const sitesDeleteCommand = defineCommand({
  name: 'sites delete',
  summary: 'Delete a site (refused while it has live pools or nodes): ironflow sites delete SITE --tenant T',
  flags: z.object({ siteId: idOf('site'), tenantId: tenant }),
  positionals: ['siteId'],
  run: (ctx, { siteId, tenantId }) => ctx.api.call('DELETE', `/v1/sites/${siteId}?tenantId=${encodeURIComponent(tenantId)}`),
});

export const siteCommands = [sitesCreateCommand, sitesGetCommand, sitesListCommand, sitesUpdateCommand, sitesDeleteCommand];
