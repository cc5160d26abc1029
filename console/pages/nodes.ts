// /console/nodes: the tenant's machines by pool and state, with power, maintenance, the last
// error, and links into the Temporal Web UI (the node's workflows by NodeId, the running
// workflow's page), reloaded every few seconds so an operator watches a node reach ready.
import type { MetalNodeView } from '../../core/schemas/metal';
import { problemText, type ApiProblem } from '../api-calls';
import { html, type SafeHtml } from '../html';
import { page } from '../layout';
import type { ConsoleSession, Flash } from '../session';
import type { TemporalLinks } from '../../core/temporal-links';

interface NodesPageInput {
  session: ConsoleSession;
  flash?: Flash;
  links: TemporalLinks;
  nodes: { ok: true; items: MetalNodeView[]; truncated: boolean } | { ok: false; problem: ApiProblem };
}

const NO_POOL = '(no pool)';
const NO_STATE = '(none)';

/** pool → state → nodes, each level in name order. */
function groupNodes(nodes: MetalNodeView[]): Array<[string, Array<[string, MetalNodeView[]]>]> {
  const pools = new Map<string, Map<string, MetalNodeView[]>>();
  for (const node of nodes) {
    const pool = node.poolId ?? NO_POOL;
    const state = node.provisionState ?? NO_STATE;
    const states = pools.get(pool) ?? new Map<string, MetalNodeView[]>();
    pools.set(pool, states);
    states.set(state, [...(states.get(state) ?? []), node]);
  }
  const byName = <T>(entries: Iterable<[string, T]>) => [...entries].sort(([a], [b]) => a.localeCompare(b));
  return byName(pools).map(([pool, states]) => [pool, byName(states)]);
}

function externalLink(href: string, text: string): SafeHtml {
  return html`<a href="${href}" target="_blank" rel="noopener noreferrer">${text}</a>`;
}

function nodeRow(node: MetalNodeView, links: TemporalLinks): SafeHtml {
  return html`<tr data-node-id="${node.nodeId}" data-state="${node.provisionState ?? ''}">
    <td class="mono">${externalLink(links.nodeWorkflows(node.nodeId), node.nodeId)}</td>
    <td class="state">${node.provisionState ?? NO_STATE}${node.provisionPhase ? html` <span class="phase">(${node.provisionPhase})</span>` : ''}</td>
    <td>${node.power ?? 'unknown'}</td>
    <td>${node.maintenance ? html`<span class="badge maintenance">maintenance</span>` : 'no'}</td>
    <td class="mono">${node.macs.join(', ') || '—'}</td>
    <td>${node.workflowId ? externalLink(links.workflow(node.workflowId), node.workflowId) : '—'}</td>
    <td class="error">${node.lastError ? `${node.lastError.code}: ${node.lastError.message}` : ''}</td>
  </tr>`;
}

function nodesTables(nodes: MetalNodeView[], links: TemporalLinks): SafeHtml {
  if (nodes.length === 0) return html`<p class="empty">This tenant has no machines.</p>`;
  return html`${groupNodes(nodes).map(
    ([pool, states]) =>
      html`<section class="pool">
        <h2>Pool ${pool}</h2>
        ${states.map(
          ([state, members]) =>
            html`<h3>${state} <span class="count">${members.length}</span></h3>
              <table class="nodes">
                <thead>
                  <tr>
                    <th>Node (its workflows)</th>
                    <th>State</th>
                    <th>Power</th>
                    <th>Maintenance</th>
                    <th>MACs</th>
                    <th>Workflow</th>
                    <th>Last error</th>
                  </tr>
                </thead>
                <tbody>
                  ${members.map((node) => nodeRow(node, links))}
                </tbody>
              </table>`,
        )}
      </section>`,
  )}`;
}

export function nodesPage(input: NodesPageInput): string {
  const { session, flash, nodes, links } = input;
  return page({
    title: 'Nodes',
    session,
    ...(flash ? { flash } : {}),
    refreshSeconds: 5,
    body: nodes.ok
      ? html`${nodes.truncated ? html`<p class="flash flash-error">Only the first ${nodes.items.length} machines are shown.</p>` : ''}${nodesTables(nodes.items, links)}`
      : html`<p class="flash flash-error" role="alert">${problemText(nodes.problem)}</p>`,
  });
}
