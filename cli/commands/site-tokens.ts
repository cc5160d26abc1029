// `ironflow site-tokens create|revoke`. --out writes the one-time bearer to a new 0600 file
// instead of printing it; revoke refuses anything with a '.', so a pasted bearer is never
// sent as an id.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';
import { idPattern } from '../../core/id-format';
import { idempotencyKeySchema, idOf, tenantIdSchema } from '../../core/schemas/common';
import { siteTokenCreateSchema, type SiteTokenView } from '../../core/schemas/site-tokens';
import { ROOT_TENANT } from '../../core/permissions';
import { defineCommand } from '../command';

const tenant = tenantIdSchema.default(ROOT_TENANT);

const siteTokensCreateCommand = defineCommand({
  name: 'site-tokens create',
  summary: 'Mint a site token: --tenant T --site S --ttl SECONDS (60-86400) [--max-uses N (1-16)] [--key K] [--out FILE]',
  flags: z.object({
    tenantId: tenant,
    siteId: idOf('site'),
    ttl: siteTokenCreateSchema.shape.ttlSeconds,
    maxUses: siteTokenCreateSchema.shape.maxUses,
    key: idempotencyKeySchema.optional(),
    out: z.string().min(1).optional(),
  }),
  async run(ctx, input) {
    const out = input.out ? path.resolve(input.out) : undefined;
    // Checked before minting, so a token is never made that could not be saved.
    if (out && existsSync(out)) throw new IronflowError('INVALID_INPUT', `--out: ${out} exists; refusing to overwrite it (pick a new file)`, { path: 'out' });
    const minted = await ctx.api.call<SiteTokenView>('POST', `/v1/sites/${input.siteId}/tokens`, {
      tenantId: input.tenantId,
      ttlSeconds: input.ttl,
      maxUses: input.maxUses,
      idempotencyKey: input.key,
    });
    const { token, ...shown } = minted;
    if (!token) {
      ctx.note(`token ${minted.id} already existed (same --key): its bearer was shown once when it was created and cannot be shown again`);
      return shown;
    }
    if (!out) return minted;
    writeFileSync(out, `${token}\n`, { mode: 0o600, flag: 'wx' });
    ctx.note(`the bearer of ${minted.id} is in ${out} (0600); it is not shown anywhere else`);
    return { ...shown, tokenFile: out };
  },
});

const siteTokensRevokeCommand = defineCommand({
  name: 'site-tokens revoke',
  summary: 'Revoke a site token by its id: ironflow site-tokens revoke jt_… --tenant T --site S',
  flags: z.object({
    tokenId: z
      .string()
      .refine((v) => !v.includes('.'), 'that looks like the token itself (it has a "."); pass its id jt_… instead, and keep the token secret')
      .refine((v) => idPattern('joinToken').test(v), 'expected a token id jt_…'),
    tenantId: tenant,
    siteId: idOf('site'),
  }),
  positionals: ['tokenId'],
  run: (ctx, input) => ctx.api.call('DELETE', `/v1/sites/${input.siteId}/tokens/${input.tokenId}?tenantId=${encodeURIComponent(input.tenantId)}`),
});

export const siteTokenCommands = [siteTokensCreateCommand, siteTokensRevokeCommand];
