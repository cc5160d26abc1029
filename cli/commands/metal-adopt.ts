// `ironflow metal adopt-token --pool P [--ttl S] [--max-uses N] [--out FILE]`: a pool's adopt
// token, for machines that already run their own OS (`ironflow agent node --server URL
// --token-file FILE`, no --node-id). --out writes the one-time bearer to a new 0600 file.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';
import { ROOT_TENANT } from '../../core/permissions';
import { adoptTokenCreateSchema, type AdoptTokenView } from '../../core/schemas/adopt';
import { idOf, tenantIdSchema } from '../../core/schemas/common';
import { defineCommand } from '../command';

export const metalAdoptTokenCommand = defineCommand({
  name: 'metal adopt-token',
  summary: 'Mint an adopt token for machines that already run their OS: ironflow metal adopt-token --pool P [--ttl SECONDS] [--max-uses N] [--out FILE]',
  flags: z.object({
    tenantId: tenantIdSchema.default(ROOT_TENANT),
    poolId: idOf('pool'),
    ttl: adoptTokenCreateSchema.shape.ttlSeconds,
    maxUses: adoptTokenCreateSchema.shape.maxUses,
    out: z.string().min(1).optional(),
  }),
  async run(ctx, input) {
    const out = input.out ? path.resolve(input.out) : undefined;
    // Checked before minting, so a token is never made that could not be saved.
    if (out && existsSync(out)) throw new IronflowError('INVALID_INPUT', `--out: ${out} exists; refusing to overwrite it (pick a new file)`, { path: 'out' });
    const minted = await ctx.api.call<AdoptTokenView>('POST', '/v1/metal/adopt-tokens', {
      tenantId: input.tenantId,
      poolId: input.poolId,
      ttlSeconds: input.ttl,
      maxUses: input.maxUses,
    });
    if (!out) return minted;
    const { token, ...shown } = minted;
    writeFileSync(out, `${token}\n`, { mode: 0o600, flag: 'wx' });
    ctx.note(`the bearer of ${minted.id} is in ${out} (0600); it is not shown anywhere else`);
    return { ...shown, tokenFile: out };
  },
});
