// `ironflow tenants create` (root operators). Credentials: credentials.ts.
import { tenantCreateSchema } from '../../core/schemas/tenants';
import { defineCommand } from '../command';

export const tenantsCreateCommand = defineCommand({
  name: 'tenants create',
  summary: 'Create a tenant: ironflow tenants create ID --name NAME',
  flags: tenantCreateSchema,
  positionals: ['id'],
  run: (ctx, input) => ctx.api.call('POST', '/v1/tenants', input),
});
