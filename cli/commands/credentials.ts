// `ironflow credentials list|create|revoke|rotate`. create and rotate print the bearer
// once; revoke and rotate refuse anything with a '.', so a pasted bearer is never sent as an id.
import { z } from 'zod';
import { idPattern } from '../../core/id-format';
import { ROOT_TENANT } from '../../core/permissions';
import { tenantIdSchema } from '../../core/schemas/common';
import { credentialCreateSchema, credentialListQuerySchema, credentialRotateSchema, type CredentialView } from '../../core/schemas/credentials';
import { defineCommand } from '../command';

const tenant = tenantIdSchema.default(ROOT_TENANT);

const credentialIdFlag = z
  .string()
  .refine((v) => !v.includes('.'), 'that looks like the bearer itself (it has a "."); pass its id cred_… instead, and keep the bearer secret')
  .refine((v) => idPattern('credential').test(v), 'expected a credential id cred_…');

const credentialsListCommand = defineCommand({
  name: 'credentials list',
  summary: "List a tenant's API credentials (never their secrets): [--tenant T] [--limit N] [--cursor cred_…]",
  flags: credentialListQuerySchema.extend({ tenantId: tenant }),
  run: (ctx, input) => {
    const query = new URLSearchParams({ tenantId: input.tenantId, limit: String(input.limit), ...(input.cursor ? { cursor: input.cursor } : {}) });
    return ctx.api.call('GET', `/v1/credentials?${query}`);
  },
  table: {
    rows: (result) => (result as { credentials: CredentialView[] }).credentials,
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'NAME', value: (r) => r.name },
      { header: 'PERMISSIONS', value: (r) => (r.permissions as string[]).join(',') },
      { header: 'CREATED', value: (r) => r.createdAt },
      { header: 'EXPIRES', value: (r) => r.expiresAt ?? 'never' },
      { header: 'ROTATED', value: (r) => r.rotatedAt ?? '' },
      { header: 'REVOKED', value: (r) => r.revokedAt ?? '' },
    ],
  },
});

const credentialsCreateCommand = defineCommand({
  name: 'credentials create',
  summary: 'Create an API credential: --tenant T --name N --permissions P (repeatable) [--expires-at 2027-01-31T00:00:00Z]; the bearer is printed once',
  // Permission names are checked by the API, which names the one it does not know.
  flags: credentialCreateSchema.extend({ permissions: z.array(z.string()).min(1) }),
  run: (ctx, input) => ctx.api.call('POST', '/v1/credentials', input),
});

const credentialsRevokeCommand = defineCommand({
  name: 'credentials revoke',
  summary: 'Revoke an API credential by its id (refused from its next request): ironflow credentials revoke cred_… [--tenant T]',
  flags: z.object({ credentialId: credentialIdFlag, tenantId: tenant }),
  positionals: ['credentialId'],
  run: (ctx, input) => ctx.api.call('POST', `/v1/credentials/${input.credentialId}/revoke`, { tenantId: input.tenantId }),
});

const credentialsRotateCommand = defineCommand({
  name: 'credentials rotate',
  summary:
    'Give an API credential a new secret (the old one is refused at once; the new bearer is printed once): ironflow credentials rotate cred_… [--tenant T] [--expires-at ISO]',
  flags: z.object({ credentialId: credentialIdFlag, tenantId: tenant, expiresAt: credentialRotateSchema.shape.expiresAt }),
  positionals: ['credentialId'],
  run: (ctx, input) => ctx.api.call('POST', `/v1/credentials/${input.credentialId}/rotate`, { tenantId: input.tenantId, expiresAt: input.expiresAt }),
});

export const credentialCommands = [credentialsListCommand, credentialsCreateCommand, credentialsRevokeCommand, credentialsRotateCommand];
