// Links into the Temporal Web UI: a node's workflows (searched by the NodeId search
// attribute every workflow of a node carries) and one workflow's own page. The UI is served
// by the Temporal server beside its frontend (config temporal.address host, temporal.uiPort).
import type { IronflowConfig } from '../services/config';

export interface TemporalLinks {
  /** The workflows list filtered to this node's workflows. */
  nodeWorkflows(nodeId: string): string;
  workflow(workflowId: string): string;
}

export function temporalWebUiBase(config: IronflowConfig): string {
  const host = config.temporal.address.replace(/:\d+$/, '');
  return `http://${host}:${config.temporal.uiPort}`;
}

export function temporalLinks(config: IronflowConfig): TemporalLinks {
  const namespaceUrl = `${temporalWebUiBase(config)}/namespaces/${encodeURIComponent(config.temporal.namespace)}`;
  return {
    nodeWorkflows: (nodeId) => `${namespaceUrl}/workflows?${new URLSearchParams({ query: `NodeId="${nodeId}"` }).toString()}`,
    workflow: (workflowId) => `${namespaceUrl}/workflows/${encodeURIComponent(workflowId)}`,
  };
}
