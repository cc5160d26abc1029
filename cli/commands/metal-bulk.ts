// `ironflow metal bulk` (start a run: answers its id at once), `metal bulk show ID [--watch]`
// (counts and per-node outcomes; --watch draws a progress bar until the run ends) and
// `metal bulk cancel ID`. Node ids come from --node (repeated) or --nodes-file (one per line,
// `-` for stdin), since a run takes up to 10,000.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';
import { ROOT_TENANT } from '../../core/permissions';
import { idempotencyKeySchema, idOf, tenantIdSchema } from '../../core/schemas/common';
import { bulkOutcomes, bulkVerbs, releaseWipes, type MetalBulkPage, type MetalBulkRunView } from '../../core/schemas/metal';
import { defineCommand, type Command } from '../command';
import type { CliContext } from '../context';
import { createProgress } from '../progress';

const tenant = tenantIdSchema.default(ROOT_TENANT);
const POLL_MS = 1000;

function nodeIdsFrom(flags: { nodeId?: string[]; nodesFile?: string }): string[] {
  const fromFile = flags.nodesFile
    ? readFileSync(flags.nodesFile === '-' ? 0 : flags.nodesFile, 'utf8')
        .split(/\s+/)
        .filter(Boolean)
    : [];
  const ids = [...(flags.nodeId ?? []), ...fromFile];
  if (ids.length === 0)
    throw new IronflowError('INVALID_INPUT', 'name the nodes with --node N (repeated) or --nodes-file FILE (one id per line, - for stdin)', {
      path: 'nodeIds',
    });
  return ids;
}

const summary = (run: MetalBulkRunView) =>
  `${run.bulkId} ${run.verb} · ${run.status} · ${run.total} nodes: ${bulkOutcomes.map((o) => `${o} ${run.counts[o] ?? 0}`).join(' · ')}`;

const showPath = (bulkId: string, query: Record<string, string>) => `/v1/metal/bulk/${bulkId}?${new URLSearchParams(query)}`;

/** Polls the run until it ends, drawing its progress (decided of total) on stderr. */
async function watch(ctx: CliContext, bulkId: string, tenantId: string): Promise<void> {
  const progress = createProgress();
  for (;;) {
    const run = await ctx.api.call<MetalBulkPage>('GET', showPath(bulkId, { tenantId, limit: '1' }));
    const decided = run.total - (run.counts.pending ?? 0);
    progress.update(
      decided,
      run.total,
      `${run.status} · accepted ${run.counts.accepted ?? 0} · refused ${run.counts.refused ?? 0} · failed ${run.counts.failed ?? 0} · cancelled ${run.counts.cancelled ?? 0}`,
    );
    if (run.status !== 'running') break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  progress.end();
}

const outcomeColumns = {
  rows: (page: unknown) => (page as MetalBulkPage).outcomes as unknown as Array<Record<string, unknown>>,
  columns: [
    { header: 'node', value: (r: Record<string, unknown>) => r.nodeId },
    { header: 'outcome', value: (r: Record<string, unknown>) => r.outcome },
    { header: 'code', value: (r: Record<string, unknown>) => (r.error as { code?: string } | null)?.code ?? '' },
    { header: 'state', value: (r: Record<string, unknown>) => r.provisionState ?? '' },
    { header: 'message', value: (r: Record<string, unknown>) => (r.error as { message?: string } | null)?.message ?? '' },
  ],
};

export const metalBulkCommands: Command[] = [
  defineCommand({
    name: 'metal bulk',
    summary:
      'One verb on up to 10,000 nodes of a pool, applied by a workflow (answers the run id at once): ironflow metal bulk --pool P --verb manage|inspect|provide|undeploy|rescue|retire (--node N… | --nodes-file F) --reason TEXT [--wipe W] [--key K] [--watch]',
    flags: z.object({
      tenantId: tenant,
      poolId: idOf('pool'),
      verb: z.enum(bulkVerbs),
      nodeId: z.array(idOf('node')).optional(),
      nodesFile: z.string().min(1).optional(),
      reason: z.string().min(1).max(512),
      wipe: z.enum(releaseWipes).optional(),
      key: idempotencyKeySchema.optional(),
      watch: z.boolean().default(false),
    }),
    async run(ctx, f) {
      const run = await ctx.api.call<MetalBulkRunView>('POST', '/v1/metal/bulk', {
        tenantId: f.tenantId,
        poolId: f.poolId,
        verb: f.verb,
        nodeIds: nodeIdsFrom(f),
        reason: f.reason,
        ...(f.wipe ? { wipe: f.wipe } : {}),
        ...(f.key ? { idempotencyKey: f.key } : {}),
      });
      if (!f.watch) return run;
      ctx.note(`started ${run.bulkId} (${run.workflowId}); ironflow metal bulk cancel ${run.bulkId} stops it`);
      await watch(ctx, run.bulkId, f.tenantId);
      return (await ctx.api.call<MetalBulkPage>('GET', showPath(run.bulkId, { tenantId: f.tenantId, limit: '1' }))).counts;
    },
  }),
  defineCommand({
    name: 'metal bulk show',
    summary: "A bulk run's counts and its nodes' outcomes: ironflow metal bulk show ID [--outcome refused] [--limit N] [--cursor C] [--watch]",
    flags: z.object({
      bulkId: idOf('bulkRun'),
      tenantId: tenant,
      outcome: z.enum(bulkOutcomes).optional(),
      limit: z.number().int().min(1).max(1000).default(100),
      cursor: z.string().regex(/^\d+$/).optional(),
      watch: z.boolean().default(false),
    }),
    positionals: ['bulkId'],
    async run(ctx, f) {
      if (f.watch) await watch(ctx, f.bulkId, f.tenantId);
      const page = await ctx.api.call<MetalBulkPage>(
        'GET',
        showPath(f.bulkId, {
          tenantId: f.tenantId,
          limit: String(f.limit),
          ...(f.outcome ? { outcome: f.outcome } : {}),
          ...(f.cursor ? { cursor: f.cursor } : {}),
        }),
      );
      if (ctx.format === 'table') {
        ctx.note(summary(page));
        if (page.nextCursor) ctx.note(`more: --cursor ${page.nextCursor}`);
      }
      return page;
    },
    table: outcomeColumns,
  }),
  defineCommand({
    name: 'metal bulk cancel',
    summary: 'Stop a bulk run: nodes not yet decided end cancelled (accepted ones keep their chains): ironflow metal bulk cancel ID',
    flags: z.object({ bulkId: idOf('bulkRun'), tenantId: tenant }),
    positionals: ['bulkId'],
    run: (ctx, f) => ctx.api.call('POST', `/v1/metal/bulk/${f.bulkId}/cancel`, { tenantId: f.tenantId }),
  }),
];
