// The search attributes each workflow the control plane starts carries, as typed lists
// (the keys are core/search-attributes.ts, registered by temporal-dev.yaml), and the
// attributes read back from a workflow's description.
import { TypedSearchAttributes } from '@temporalio/common';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { searchAttributeKeys } from '../../core/search-attributes';

/** A provision run: the Web UI lists a node's runs by NodeId, a state's by ProvisionState, a profile's by ProfileRef. */
export const provisionRunAttributes = (run: { nodeId: string; siteId: string; tenantId: string; provisionState: string; profileRef: string }) =>
  new TypedSearchAttributes([
    { key: searchAttributeKeys.NodeId, value: run.nodeId },
    { key: searchAttributeKeys.SiteId, value: run.siteId },
    { key: searchAttributeKeys.TenantId, value: run.tenantId },
    { key: searchAttributeKeys.ProvisionState, value: run.provisionState },
    { key: searchAttributeKeys.ProfileRef, value: run.profileRef },
  ]);

/** A node's lifecycle (`node:<id>`): ProvisionState is the state it was woken in (it upserts the state it drives). */
export const lifecycleAttributes = (node: { id: string; siteId: string; tenantId: string; provisionState: string | null }) =>
  new TypedSearchAttributes([
    { key: searchAttributeKeys.NodeId, value: node.id },
    { key: searchAttributeKeys.SiteId, value: node.siteId },
    { key: searchAttributeKeys.TenantId, value: node.tenantId },
    { key: searchAttributeKeys.ProvisionState, value: node.provisionState ?? '' },
  ]);

/** A workflow that belongs to a tenant and no node (a bulk run, a wiring check). */
export const tenantAttributes = (tenantId: string) => new TypedSearchAttributes([{ key: searchAttributeKeys.TenantId, value: tenantId }]);

/** The node a described workflow is about (its NodeId), if it carries one. */
export const nodeIdOf = (description: Pick<WorkflowExecutionDescription, 'typedSearchAttributes'>): string | undefined =>
  description.typedSearchAttributes.get(searchAttributeKeys.NodeId);

/** The tenant a described workflow belongs to (its TenantId), if it carries one. */
export const tenantIdOf = (description: WorkflowExecutionDescription): string | undefined =>
  description.typedSearchAttributes.get(searchAttributeKeys.TenantId);
