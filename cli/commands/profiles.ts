// `ironflow profiles create|list|get|validate|render|update|run` and `workflows follow`.
// --profile-version defaults to the latest version where the method allows it.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';
import { ROOT_TENANT } from '../../core/permissions';
import type { ProvisionStatus } from '../../core/plan';
import { profileIdSchema, profileRunSchema, profileVisibilitySchema, type ProfileView } from '../../core/schemas/profiles';
import { tenantIdSchema } from '../../core/schemas/common';
import { defineCommand, type Column } from '../command';
import type { CliContext } from '../context';

const tenantId = tenantIdSchema.default(ROOT_TENANT);
const profileVersion = z.number().int().min(1).optional();
const columns: Column[] = [
  { header: 'id', value: (p) => p.id },
  { header: 'version', value: (p) => p.version },
  { header: 'tenant', value: (p) => p.tenantId },
  { header: 'visibility', value: (p) => p.visibility },
  { header: 'locked', value: (p) => p.locked },
];

function readDocument(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new IronflowError('INVALID_INPUT', `${file}: ${(err as Error).message} (a profile file is JSON)`, { path: 'file' });
  }
}

const versionQuery = (input: { tenantId: string; profileVersion?: number }) =>
  new URLSearchParams({ tenantId: input.tenantId, ...(input.profileVersion ? { version: String(input.profileVersion) } : {}) });

const profilesCreateCommand = defineCommand({
  name: 'profiles create',
  summary: 'Store a profile version from a JSON file: FILE [--public]',
  flags: z.object({ file: z.string().min(1), tenantId, public: z.boolean().default(false) }),
  positionals: ['file'],
  run: (ctx, input) => ctx.api.call('POST', '/v1/profiles', { tenantId: input.tenantId, document: readDocument(input.file), public: input.public }),
});

const profilesListCommand = defineCommand({
  name: 'profiles list',
  summary: "The tenant's profiles, public ones and shipped ones (tenant builtin)",
  flags: z.object({ tenantId }),
  run: async (ctx, input) => (await ctx.api.call<{ profiles: ProfileView[] }>('GET', `/v1/profiles?tenantId=${encodeURIComponent(input.tenantId)}`)).profiles,
  table: { columns },
});

const profilesGetCommand = defineCommand({
  name: 'profiles get',
  summary: 'A profile as the tenant sees it (its own, else public, else shipped): ID [--profile-version N]',
  flags: z.object({ id: profileIdSchema, tenantId, profileVersion }),
  positionals: ['id'],
  run: (ctx, input) => ctx.api.call('GET', `/v1/profiles/${input.id}?${versionQuery(input)}`),
});

const profilesValidateCommand = defineCommand({
  name: 'profiles validate',
  summary: 'Every problem of a stored profile, each with its path: ID [--profile-version N]',
  flags: z.object({ id: profileIdSchema, tenantId, profileVersion }),
  positionals: ['id'],
  async run(ctx, input) {
    const result = await ctx.api.call<{ id: string; version: number; valid: boolean; problems: Array<{ path: string; message: string }> }>(
      'POST',
      `/v1/profiles/${input.id}/validate`,
      {
        tenantId: input.tenantId,
        ...(input.profileVersion ? { version: input.profileVersion } : {}),
      },
    );
    if (ctx.format === 'json') return result;
    ctx.note(result.valid ? `${result.id}@${result.version}: valid` : `${result.id}@${result.version}: ${result.problems.length} problem(s)`);
    return result.problems;
  },
  table: {
    columns: [
      { header: 'path', value: (p) => p.path },
      { header: 'problem', value: (p) => p.message },
    ],
  },
});

const profilesRenderCommand = defineCommand({
  name: 'profiles render',
  summary: 'The compiled plan the provision workflow would run: ID [--profile-version N]',
  flags: z.object({ id: profileIdSchema, tenantId, profileVersion }),
  positionals: ['id'],
  run: async (ctx, input) => {
    const plan = await ctx.api.call('GET', `/v1/profiles/${input.id}/render?${versionQuery(input)}`);
    process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`); // a plan is a document, not a table
    return undefined;
  },
});

const profilesUpdateCommand = defineCommand({
  name: 'profiles update',
  summary: 'Replace a version’s document (--file F) or change its visibility (--visibility V): ID [--profile-version N] [--if-version N]',
  flags: z.object({
    id: profileIdSchema,
    tenantId,
    profileVersion,
    file: z.string().optional(),
    visibility: profileVisibilitySchema.optional(),
    ifVersion: z.number().int().min(1).optional(),
  }),
  positionals: ['id'],
  run(ctx, input) {
    if ((input.file === undefined) === (input.visibility === undefined))
      throw new IronflowError('INVALID_INPUT', 'give --file or --visibility (one of them)', { path: 'file' });
    return ctx.api.call('PATCH', `/v1/profiles/${input.id}`, {
      tenantId: input.tenantId,
      ...(input.profileVersion ? { version: input.profileVersion } : {}),
      ...(input.file ? { document: readDocument(input.file) } : {}),
      ...(input.visibility ? { visibility: input.visibility } : {}),
      ...(input.ifVersion ? { ifVersion: input.ifVersion } : {}),
    });
  },
});

interface StatusView {
  workflowId: string;
  runStatus: string;
  status: ProvisionStatus | null;
  pendingActivities: Array<{ activity: string; attempt: number; heartbeat: unknown; lastFailure: string | null }>;
}

/** One line per change: the step, its attempt, why it waits, its last heartbeat. */
function describeStatus(view: StatusView): string {
  const s = view.status;
  const pending = view.pendingActivities[0];
  const parts = [view.runStatus.toLowerCase(), s?.phase ?? '?'];
  if (s?.step) parts.push(`${s.step.key} ${s.step.use} on ${s.step.taskQueue ?? s.step.queue}`);
  if (pending) parts.push(`attempt ${pending.attempt}`);
  if (s?.waitingFor) parts.push(`waiting for ${s.waitingFor}`);
  if (pending?.heartbeat) parts.push(`progress ${JSON.stringify(pending.heartbeat)}`);
  if (pending?.lastFailure) parts.push(`last failure: ${pending.lastFailure}`);
  if (s?.error) parts.push(`error: ${s.error}`);
  return parts.join(' · ');
}

async function follow(ctx: CliContext, workflowId: string, tenant: string): Promise<StatusView> {
  let last = '';
  for (;;) {
    const view = await ctx.api.call<StatusView>('GET', `/v1/workflows/${encodeURIComponent(workflowId)}?tenantId=${encodeURIComponent(tenant)}`);
    const line = describeStatus(view);
    if (line !== last) ctx.note(`${new Date().toISOString()}  ${line}`);
    last = line;
    if (view.runStatus !== 'RUNNING') return view;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

const profilesRunCommand = defineCommand({
  name: 'profiles run',
  summary: 'Run a profile on a machine as a provision workflow: ID --node NODE [--state deploying] [--profile-version N] [--follow]',
  flags: z.object({
    id: profileIdSchema,
    tenantId,
    nodeId: profileRunSchema.shape.nodeId,
    profileVersion,
    state: profileRunSchema.shape.provisionState,
    follow: z.boolean().default(false),
  }),
  positionals: ['id'],
  async run(ctx, input) {
    const started = await ctx.api.call<{ workflowId: string; profileRef: string }>('POST', `/v1/profiles/${input.id}/runs`, {
      tenantId: input.tenantId,
      nodeId: input.nodeId,
      provisionState: input.state,
      ...(input.profileVersion ? { version: input.profileVersion } : {}),
    });
    if (!input.follow) return started;
    ctx.note(`started ${started.workflowId} (${started.profileRef})`);
    const final = await follow(ctx, started.workflowId, input.tenantId);
    return { workflowId: final.workflowId, runStatus: final.runStatus, history: final.status?.history ?? [] };
  },
});

const workflowsFollowCommand = defineCommand({
  name: 'workflows follow',
  summary: 'Follow a provision workflow until it ends: the step, attempt, why it waits, progress',
  flags: z.object({ workflowId: z.string().min(1), tenantId }),
  positionals: ['workflowId'],
  async run(ctx, input) {
    const final = await follow(ctx, input.workflowId, input.tenantId);
    return { workflowId: final.workflowId, runStatus: final.runStatus, history: final.status?.history ?? [] };
  },
});

export const profileCommands = [
  profilesCreateCommand,
  profilesListCommand,
  profilesGetCommand,
  profilesValidateCommand,
  profilesRenderCommand,
  profilesUpdateCommand,
  profilesRunCommand,
  workflowsFollowCommand,
];
