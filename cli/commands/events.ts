// `ironflow events`: the tenant's event log; `--follow` keeps polling for new ones.
import { z } from 'zod';
import { eventsPageSchema, eventsQuerySchema } from '../../core/schemas/events';
import { ROOT_TENANT } from '../../core/permissions';
import { defineCommand } from '../command';
import { render } from '../output';

type Page = z.infer<typeof eventsPageSchema>;
const columns = [
  { header: 'seq', value: (e: Record<string, unknown>) => e.seq },
  { header: 'time', value: (e: Record<string, unknown>) => e.createdAt },
  { header: 'type', value: (e: Record<string, unknown>) => e.type },
  { header: 'subject', value: (e: Record<string, unknown>) => e.subjectId },
  { header: 'data', value: (e: Record<string, unknown>) => e.data },
];

export const eventsCommand = defineCommand({
  name: 'events',
  summary: 'The event log (--after SEQ, --type PREFIX, --follow)',
  flags: eventsQuerySchema.extend({ tenantId: eventsQuerySchema.shape.tenantId.default(ROOT_TENANT), follow: z.boolean().default(false) }),
  async run(ctx, input) {
    const page = async (after?: number) => {
      const query = new URLSearchParams({ tenantId: input.tenantId, limit: String(input.limit) });
      if (after !== undefined) query.set('after', String(after));
      if (input.type) query.set('type', input.type);
      return ctx.api.call<Page>('GET', `/v1/events?${query}`);
    };
    const first = await page(input.after);
    if (!input.follow) return first.events;
    // A follower polls after the last seq it saw (nextCursor is null once it is caught up).
    const lastSeq = (p: Page, fallback?: number) => p.events[p.events.length - 1]?.seq ?? fallback;
    let cursor = lastSeq(first, input.after);
    process.stdout.write(`${render(first.events, ctx.format, { columns })}\n`);
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const next = await page(cursor);
      if (next.events.length) {
        process.stdout.write(
          `${ctx.format === 'json' ? JSON.stringify(next.events) : next.events.map((e) => `${e.seq}  ${e.createdAt}  ${e.type}  ${e.subjectId ?? '-'}`).join('\n')}\n`,
        );
        cursor = lastSeq(next, cursor);
      }
    }
  },
  table: { columns },
});
