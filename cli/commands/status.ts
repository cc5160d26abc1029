// `ironflow status`: is the API up, are its database and Temporal healthy; `--check` also
// runs the wiring check (a workflow on the control-plane worker that writes a row).
import { z } from 'zod';
import type { SystemCheckView } from '../../core/schemas/system';
import { healthSchema } from '../../core/schemas/system';
import { ROOT_TENANT } from '../../core/permissions';
import { defineCommand } from '../command';

export const statusCommand = defineCommand({
  name: 'status',
  summary: 'Health of the API, its database and Temporal (--check: run a workflow end to end)',
  flags: z.object({ check: z.boolean().default(false), tenant: z.string().default(ROOT_TENANT) }),
  async run(ctx, input) {
    const health = await ctx.api.request<z.infer<typeof healthSchema>>('GET', '/healthz');
    const body = health.body;
    const result: Record<string, unknown> = {
      api: ctx.api.baseUrl,
      status: body.status,
      database: body.database.ok ? `ok (${body.database.provider})` : `DOWN: ${body.database.error}`,
      temporal: body.temporal.ok ? `ok (${body.temporal.address}, namespace ${body.temporal.namespace})` : `DOWN: ${body.temporal.error}`,
      temporalWebUi: body.temporal.webUi,
    };
    if (input.check) {
      const started = await ctx.api.call<SystemCheckView>('POST', '/v1/system/checks', { tenantId: input.tenant });
      ctx.note(`wiring check: workflow ${started.workflowId} started…`);
      let check = started;
      for (let i = 0; i < 100 && check.status !== 'succeeded'; i++) {
        await new Promise((r) => setTimeout(r, 200));
        check = await ctx.api.call<SystemCheckView>('GET', `/v1/system/checks/${started.id}?tenantId=${encodeURIComponent(input.tenant)}`);
      }
      result.check =
        check.status === 'succeeded' ? `ok: ${check.workflowId} ran on worker ${check.workerId}` : `still running: ${check.workflowId} (is the worker up?)`;
    }
    return result;
  },
});
