// The search attributes provision workflows carry (registered by temporal-dev.yaml), so
// the Temporal Web UI lists a node's workflows: `NodeId = "node_…"`.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const searchAttributeKeys = {
  NodeId: defineSearchAttributeKey('NodeId', SearchAttributeType.KEYWORD),
  SiteId: defineSearchAttributeKey('SiteId', SearchAttributeType.KEYWORD),
  TenantId: defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD),
  ProvisionState: defineSearchAttributeKey('ProvisionState', SearchAttributeType.KEYWORD),
  ProfileRef: defineSearchAttributeKey('ProfileRef', SearchAttributeType.KEYWORD),
} as const;
