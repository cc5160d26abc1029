// `ironflow tenants create`, `ironflow credentials create` (root operators).
import { z } from 'zod';
import { credentialCreateSchema, tenantCreateSchema } from '../../core/schemas/tenants';
import { defineCommand } from '../command';

export const tenantsCreateCommand = defineCommand({
  name: 'tenants create',
  summary: 'Create a tenant: ironflow tenants create ID --name NAME',
  flags: tenantCreateSchema,
  positionals: ['id'],
  run: (ctx, input) => ctx.api.call('POST', '/v1/tenants', input),
});

export const credentialsCreateCommand = defineCommand({
  name: 'credentials create',
  summary: 'Create an API credential: --tenant T --name N --permissions P (repeatable); the bearer is printed once',
  flags: credentialCreateSchema.extend({ permissions: z.array(z.string()).min(1) }),
  run: (ctx, input) => ctx.api.call('POST', '/v1/credentials', input),
});
