// `ironflow metal enroll|get|list|manage|inspect|provide|deploy|undeploy|rescue|unrescue|
// abort|recover|retire|power|bulk|discovered|confirm-mac`. The BMC password never goes on the command line: it
// comes from --bmc-password-file or IRONFLOW_BMC_PASSWORD.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';
import { driverConcerns } from '../../core/metal/hardware-profiles';
import { ROOT_TENANT } from '../../core/permissions';
import { provisionStates } from '../../core/provision-states';
import { bmcDriverNames } from '../../core/schemas/bmc';
import type { DiscoveredMachine } from '../../core/schemas/discovery';
import { idOf, labelKeySchema, macSchema, tenantIdSchema } from '../../core/schemas/common';
import {
  abortReasonSchema,
  machineArchs,
  metalDeploySchema,
  metalEnrollSchema,
  metalPowerSchema,
  metalUndeploySchema,
  type MetalNodeView,
} from '../../core/schemas/metal';
import { defineCommand, type Command } from '../command';
import { metalBulkCommands } from './metal-bulk';

const tenant = tenantIdSchema.default(ROOT_TENANT);
const version = z.number().int().min(1).optional();
const nodeFlags = { nodeId: idOf('node'), tenantId: tenant, version };

const columns = [
  { header: 'node', value: (n: Record<string, unknown>) => n.nodeId },
  { header: 'state', value: (n: Record<string, unknown>) => n.provisionState },
  { header: 'maintenance', value: (n: Record<string, unknown>) => n.maintenance },
  { header: 'power', value: (n: Record<string, unknown>) => n.power },
  { header: 'failedFrom', value: (n: Record<string, unknown>) => n.failedFrom ?? '' },
  { header: 'workflow', value: (n: Record<string, unknown>) => n.workflowId ?? '' },
];

function bmcPassword(file: string | undefined): string {
  if (file) return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  const fromEnv = process.env.IRONFLOW_BMC_PASSWORD;
  if (fromEnv) return fromEnv;
  throw new IronflowError('INVALID_INPUT', 'give the BMC password with --bmc-password-file FILE or IRONFLOW_BMC_PASSWORD (never on the command line)', {
    path: 'bmc.password',
  });
}

const discoveredColumns = [
  { header: 'mac', value: (m: Record<string, unknown>) => m.mac },
  { header: 'productUuid', value: (m: Record<string, unknown>) => m.productUuid ?? '' },
  { header: 'arch', value: (m: Record<string, unknown>) => m.arch },
  { header: 'lastSeen', value: (m: Record<string, unknown>) => m.lastSeen },
  { header: 'count', value: (m: Record<string, unknown>) => m.count },
  { header: 'node', value: (m: Record<string, unknown>) => m.nodeId ?? '' },
  { header: 'candidateFor', value: (m: Record<string, unknown>) => m.candidateFor ?? '' },
];

const verbPath = (nodeId: string, verb: string) => `/v1/metal/nodes/${nodeId}/${verb}`;

const metalEnrollCommand = defineCommand({
  name: 'metal enroll',
  summary:
    'Enroll a machine by its BMC: --pool P --bmc-driver redfish|ipmi --bmc-address A --bmc-username U (--bmc-password-file F | IRONFLOW_BMC_PASSWORD) [--mac M]… [--product-uuid U] [--hardware-profile H] [--driver concern=name]…',
  flags: z.object({
    tenantId: tenant,
    poolId: idOf('pool'),
    bmcDriver: z.enum(bmcDriverNames),
    bmcAddress: z.string().min(1),
    bmcUsername: z.string().min(1),
    bmcPasswordFile: z.string().optional(),
    bmcCaFile: z.string().optional(),
    mac: z.array(macSchema).optional(),
    productUuid: metalEnrollSchema.shape.productUuid,
    hardwareProfile: metalEnrollSchema.shape.hardwareProfile,
    // concern=name, each side parsed by the enroll body's `drivers` schema (its keys and values).
    driver: z
      .array(
        z
          .string()
          .regex(/^[^=]+=[^=]+$/, 'concern=driver, e.g. boot=ipxe')
          .transform((text) => text.split('=') as [string, string])
          .pipe(z.tuple([z.enum(driverConcerns), labelKeySchema])),
      )
      .optional(),
    arch: z.enum(machineArchs).optional(),
  }),
  run: (ctx, f) =>
    ctx.api.call('POST', '/v1/metal/nodes', {
      tenantId: f.tenantId,
      poolId: f.poolId,
      bmc: {
        driver: f.bmcDriver,
        address: f.bmcAddress,
        username: f.bmcUsername,
        password: bmcPassword(f.bmcPasswordFile),
        ...(f.bmcCaFile ? { caPem: readFileSync(f.bmcCaFile, 'utf8') } : {}),
      },
      ...(f.mac ? { macs: f.mac } : {}),
      ...(f.productUuid ? { productUuid: f.productUuid } : {}),
      ...(f.hardwareProfile ? { hardwareProfile: f.hardwareProfile } : {}),
      ...(f.driver ? { drivers: Object.fromEntries(f.driver) } : {}),
      ...(f.arch ? { arch: f.arch } : {}),
    }),
});

const metalGetCommand = defineCommand({
  name: 'metal get',
  summary: 'Show a metal node: ironflow metal get NODE --tenant T',
  flags: z.object({ nodeId: idOf('node'), tenantId: tenant }),
  positionals: ['nodeId'],
  run: (ctx, f) => ctx.api.call('GET', `/v1/metal/nodes/${f.nodeId}?tenantId=${encodeURIComponent(f.tenantId)}`),
});

const metalListCommand = defineCommand({
  name: 'metal list',
  summary: 'Metal nodes: ironflow metal list --tenant T [--pool P] [--site S] [--state ready]',
  flags: z.object({ tenantId: tenant, poolId: idOf('pool').optional(), siteId: idOf('site').optional(), state: z.enum(provisionStates).optional() }),
  run: async (ctx, f) => {
    const query = new URLSearchParams({
      tenantId: f.tenantId,
      ...(f.poolId ? { poolId: f.poolId } : {}),
      ...(f.siteId ? { siteId: f.siteId } : {}),
      ...(f.state ? { state: f.state } : {}),
    });
    return (await ctx.api.call<{ nodes: MetalNodeView[] }>('GET', `/v1/metal/nodes?${query}`)).nodes;
  },
  table: { columns },
});

const simpleVerb = (verb: string, summary: string) =>
  defineCommand({
    name: `metal ${verb}`,
    summary: `${summary}: ironflow metal ${verb} NODE --tenant T [--version N]`,
    flags: z.object(nodeFlags),
    positionals: ['nodeId'],
    run: (ctx, f) => ctx.api.call('POST', verbPath(f.nodeId, verb), { tenantId: f.tenantId, version: f.version }),
  });

export const metalCommands: Command[] = [
  metalEnrollCommand,
  metalGetCommand,
  metalListCommand,
  simpleVerb('manage', 'Re-verify the BMC, re-inspect and re-commission a ready node'),
  simpleVerb('inspect', 'Re-inspect a ready node (then re-commission)'),
  simpleVerb('provide', 'Re-commission a ready node'),
  defineCommand({
    name: 'metal deploy',
    summary: 'Deploy a ready node with a profile: ironflow metal deploy NODE --profile ID --profile-version N',
    flags: z.object({ ...nodeFlags, profile: metalDeploySchema.shape.profileId, profileVersion: metalDeploySchema.shape.profileVersion }),
    positionals: ['nodeId'],
    run: (ctx, f) =>
      ctx.api.call('POST', verbPath(f.nodeId, 'deploy'), { tenantId: f.tenantId, version: f.version, profileId: f.profile, profileVersion: f.profileVersion }),
  }),
  defineCommand({
    name: 'metal undeploy',
    summary: 'Release a deployed (or rescued) node: wipe, power off, back to ready: ironflow metal undeploy NODE [--wipe none|quick|secure-erase|crypto-erase]',
    flags: metalUndeploySchema.extend({ ...nodeFlags, wipe: metalUndeploySchema.shape.wipe.unwrap().optional() }),
    positionals: ['nodeId'],
    run: (ctx, f) => ctx.api.call('POST', verbPath(f.nodeId, 'undeploy'), { tenantId: f.tenantId, version: f.version, ...(f.wipe ? { wipe: f.wipe } : {}) }),
  }),
  simpleVerb('rescue', 'Boot the rescue ramdisk on a deployed node'),
  simpleVerb('unrescue', 'Boot a rescued node back into its installed OS'),
  defineCommand({
    name: 'metal abort',
    summary: 'Stop the running workflow (its cleanup runs); the node lands in failed: ironflow metal abort NODE [--reason TEXT]',
    flags: z.object({ ...nodeFlags, reason: abortReasonSchema.optional() }),
    positionals: ['nodeId'],
    run: (ctx, f) => ctx.api.call('POST', verbPath(f.nodeId, 'abort'), { tenantId: f.tenantId, version: f.version, ...(f.reason ? { reason: f.reason } : {}) }),
  }),
  simpleVerb('recover', 'Move a failed node to the recover target of where it failed'),
  simpleVerb('retire', 'Crypto-erase, power off and revoke the identity (terminal)'),
  defineCommand({
    name: 'metal power',
    summary: 'Power a node on, off or cycle it through its BMC: ironflow metal power NODE --action on|off|cycle',
    flags: metalPowerSchema.extend(nodeFlags),
    positionals: ['nodeId'],
    run: (ctx, f) => ctx.api.call('POST', verbPath(f.nodeId, 'power'), { tenantId: f.tenantId, version: f.version, action: f.action }),
  }),
  defineCommand({
    name: 'metal discovered',
    summary: "PXE clients the site's agents saw in the last 24 h (unverified; candidates await confirm-mac): ironflow metal discovered --site S [--tenant T]",
    flags: z.object({ tenantId: tenant, siteId: idOf('site') }),
    run: async (ctx, f) =>
      (await ctx.api.call<{ items: DiscoveredMachine[] }>('GET', `/v1/sites/${f.siteId}/discovered?${new URLSearchParams({ tenantId: f.tenantId })}`)).items,
    table: { columns: discoveredColumns },
  }),
  defineCommand({
    name: 'metal confirm-mac',
    summary: "Bind a machine's PXE MAC (its discovered candidate or one you know): ironflow metal confirm-mac NODE --mac M [--tenant T]",
    flags: z.object({ nodeId: idOf('node'), tenantId: tenant, mac: macSchema }),
    positionals: ['nodeId'],
    run: (ctx, f) => ctx.api.call('POST', verbPath(f.nodeId, 'confirm-mac'), { tenantId: f.tenantId, mac: f.mac }),
  }),
  ...metalBulkCommands,
];
