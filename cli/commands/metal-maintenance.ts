// `ironflow metal maintenance NODE --on|--off --reason TEXT`: the maintenance axis. A failure's
// maintenance is cleared here or by recover; an operator's only here.
import { z } from 'zod';
import { IronflowError } from '../../core/errors';
import { ROOT_TENANT } from '../../core/permissions';
import { idOf, tenantIdSchema } from '../../core/schemas/common';
import { metalMaintenanceSchema } from '../../core/schemas/metal';
import { defineCommand } from '../command';

export const metalMaintenanceCommand = defineCommand({
  name: 'metal maintenance',
  summary:
    'Turn maintenance on or off (a node in maintenance refuses deploy): ironflow metal maintenance NODE --on|--off --reason TEXT [--tenant T] [--version N]',
  flags: z.object({
    nodeId: idOf('node'),
    tenantId: tenantIdSchema.default(ROOT_TENANT),
    version: metalMaintenanceSchema.shape.version,
    on: z.boolean().optional(),
    off: z.boolean().optional(),
    reason: metalMaintenanceSchema.shape.reason,
  }),
  positionals: ['nodeId'],
  run: (ctx, f) => {
    if (Boolean(f.on) === Boolean(f.off)) throw new IronflowError('INVALID_INPUT', 'give exactly one of --on and --off', { path: 'on' });
    return ctx.api.call('POST', `/v1/metal/nodes/${f.nodeId}/maintenance`, { tenantId: f.tenantId, version: f.version, on: Boolean(f.on), reason: f.reason });
  },
});
