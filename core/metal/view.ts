// The node's metal view: what every metal method answers. Never credentials: the BMC is
// its driver, address and whether credentials are set.
import type { Node } from '../../generated/prisma-sqlite/client';
import { isoTimestamp } from '../iso-timestamp';
import { macSources, type MetalNodeView } from '../schemas/metal';
import type { DriverBindings } from './hardware-profiles';

const stringArray = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
/** The string-valued entries of an object (a loop: entries, filter and fromEntries made three arrays a node). */
function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!value || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [key, entry] of Object.entries(value)) if (typeof entry === 'string') out[key] = entry;
  return out;
}

/** The columns the view reads: a page of nodes selects only these, never a node's inventory or host spec. */
export const metalViewColumns = [
  'id',
  'tenantId',
  'siteId',
  'poolId',
  'role',
  'provisionState',
  'provisionPhase',
  'version',
  'maintenance',
  'maintenanceReason',
  'maintenanceSource',
  'power',
  'bmcDriver',
  'bmcAddress',
  'bmcCredentialsRef',
  'macs',
  'macSource',
  'discoveredMac',
  'productUuid',
  'arch',
  'uefi',
  'hardwareProfile',
  'driverBindings',
  'labels',
  'deployProfile',
  'releaseWipe',
  'workflowId',
  'failedFrom',
  'lastError',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<keyof Node>;

export type MetalViewRow = Pick<Node, (typeof metalViewColumns)[number]>;

export function metalView(node: MetalViewRow): MetalNodeView {
  const deploy = node.deployProfile as { id?: unknown; version?: unknown } | null;
  const lastError = node.lastError as { code?: unknown; message?: unknown } | null;
  return {
    nodeId: node.id,
    tenantId: node.tenantId,
    siteId: node.siteId,
    poolId: node.poolId,
    role: node.role,
    provisionState: node.provisionState,
    provisionPhase: node.provisionPhase,
    version: node.version,
    maintenance: node.maintenance,
    maintenanceReason: node.maintenance ? node.maintenanceReason : null,
    maintenanceSource: node.maintenance && (node.maintenanceSource === 'operator' || node.maintenanceSource === 'failure') ? node.maintenanceSource : null,
    power: node.power,
    bmc: { driver: node.bmcDriver, address: node.bmcAddress, credentialsSet: node.bmcCredentialsRef !== null },
    macs: stringArray(node.macs),
    macSource: macSources.find((source) => source === node.macSource) ?? null,
    discoveredMac: node.discoveredMac,
    productUuid: node.productUuid,
    arch: node.arch,
    uefi: node.uefi,
    hardwareProfile: node.hardwareProfile,
    driverBindings: (node.driverBindings ?? {}) as Required<MetalNodeView>['driverBindings'] & DriverBindings,
    labels: stringRecord(node.labels),
    deployProfile: deploy && typeof deploy.id === 'string' && typeof deploy.version === 'number' ? { id: deploy.id, version: deploy.version } : null,
    releaseWipe: node.releaseWipe,
    workflowId: node.workflowId,
    failedFrom: node.failedFrom,
    lastError: lastError && typeof lastError.message === 'string' ? { code: String(lastError.code ?? 'INTERNAL'), message: lastError.message } : null,
    createdAt: isoTimestamp(node.createdAt),
    updatedAt: isoTimestamp(node.updatedAt),
  };
}
