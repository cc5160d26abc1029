// /console/discovery: pick a site, see the machines its agents saw PXE-booting in the last
// 24 h (metal.discovered), confirm a candidate's MAC or bind one by hand. Each binding form
// asks the browser for a confirmation first (data-confirm, console.js).
import type { DiscoveredMachine } from '../../core/schemas/discovery';
import type { SiteView } from '../../core/schemas/sites';
import { problemText, type ApiProblem } from '../api-calls';
import { html, type SafeHtml } from '../html';
import { csrfField, page } from '../layout';
import type { ConsoleSession, Flash } from '../session';

interface DiscoveryPageInput {
  session: ConsoleSession;
  flash?: Flash;
  /** Undefined when the API refused the list (the flash says why). */
  sites: SiteView[] | undefined;
  siteId?: string;
  /** The site's discovered list, or why the API refused it. */
  discovered?: { ok: true; items: DiscoveredMachine[] } | { ok: false; problem: ApiProblem };
}

function sitePicker(sites: SiteView[] | undefined, selected: string | undefined): SafeHtml {
  if (!sites) return html``;
  if (sites.length === 0) return html`<p class="empty">This tenant has no sites.</p>`;
  return html`<form method="get" action="/console/discovery" class="site-picker">
    <label for="siteId">Site</label>
    <select id="siteId" name="siteId" data-autosubmit>
      ${sites.map((s) => html`<option value="${s.id}" ${s.id === selected ? html` selected` : ''}>${s.region} · ${s.kind} · ${s.id}</option>`)}
    </select>
    <button type="submit">Show</button>
  </form>`;
}

function confirmForm(session: ConsoleSession, siteId: string, nodeId: string, mac: string): SafeHtml {
  return html`<form
    method="post"
    action="/console/discovery/confirm"
    data-confirm="Bind MAC ${mac} to node ${nodeId}? The machine will be provisioned through this MAC."
  >
    ${csrfField(session)}<input type="hidden" name="siteId" value="${siteId}" /><input type="hidden" name="nodeId" value="${nodeId}" /><input
      type="hidden"
      name="mac"
      value="${mac}"
    />
    <button type="submit" class="confirm">Confirm</button>
  </form>`;
}

function status(item: DiscoveredMachine): SafeHtml {
  if (item.nodeId) return html`<span class="badge enrolled">enrolled as ${item.nodeId}</span>`;
  if (item.candidateFor) return html`<span class="badge candidate">candidate for ${item.candidateFor}</span>`;
  return html`<span class="badge unknown">unknown</span>`;
}

function discoveredTable(session: ConsoleSession, siteId: string, items: DiscoveredMachine[]): SafeHtml {
  if (items.length === 0) return html`<p class="empty">No machine seen PXE-booting at this site in the last 24 h.</p>`;
  return html`<table class="discovered">
    <thead>
      <tr>
        <th>MAC</th>
        <th>Product UUID</th>
        <th>Arch</th>
        <th>First seen</th>
        <th>Last seen</th>
        <th>Count</th>
        <th>Relays</th>
        <th>Seen by</th>
        <th>Status</th>
        <th></th>
      </tr>
    </thead>
    <tbody>
      ${items.map(
        (item) =>
          html`<tr data-mac="${item.mac}" ${item.candidateFor ? html` class="candidate"` : ''}>
            <td class="mono">${item.mac}</td>
            <td class="mono">${item.productUuid ?? '—'}</td>
            <td>${item.arch}</td>
            <td>${item.firstSeen}</td>
            <td>${item.lastSeen}</td>
            <td>${item.count}</td>
            <td>${item.relays.join(', ') || '—'}</td>
            <td class="mono">${item.agentNodeIds.join(', ')}</td>
            <td>${status(item)}</td>
            <td>${item.candidateFor && !item.nodeId ? confirmForm(session, siteId, item.candidateFor, item.mac) : ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function manualBindForm(session: ConsoleSession, siteId: string): SafeHtml {
  return html`<h2>Bind a MAC by hand</h2>
    <form
      method="post"
      action="/console/discovery/confirm"
      class="manual-bind"
      data-confirm="Bind this MAC to this node? The machine will be provisioned through it."
    >
      ${csrfField(session)}<input type="hidden" name="siteId" value="${siteId}" /> <label for="bind-node">Node id</label
      ><input id="bind-node" name="nodeId" required maxlength="64" placeholder="node_…" /> <label for="bind-mac">MAC</label
      ><input id="bind-mac" name="mac" required maxlength="32" placeholder="b8:ce:f6:00:00:01" />
      <button type="submit">Bind</button>
    </form>`;
}

export function discoveryPage(input: DiscoveryPageInput): string {
  const { session, flash, siteId, discovered } = input;
  return page({
    title: 'PXE discovery',
    session,
    ...(flash ? { flash } : {}),
    refreshSeconds: 5,
    body: html`${sitePicker(input.sites, siteId)}
    ${
      siteId && discovered
        ? discovered.ok
          ? html`${discoveredTable(session, siteId, discovered.items)}${manualBindForm(session, siteId)}`
          : html`<p class="flash flash-error" role="alert">${problemText(discovered.problem)}</p>`
        : ''
    }`,
  });
}
