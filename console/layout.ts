// The frame of every console page: one stylesheet and one script from /console/assets (the
// CSP allows nothing inline), the navigation, the sign-out form and the flash message.
import { html, type SafeHtml } from './html';
import type { ConsoleSession, Flash } from './session';

interface PageFrame {
  title: string;
  /** Signed-in pages show the navigation and sign-out. */
  session?: ConsoleSession;
  flash?: Flash;
  /** console.js reloads the page this often while no form field is being edited. */
  refreshSeconds?: number;
  body: SafeHtml;
}

export function csrfField(session: ConsoleSession): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${session.csrfToken}" />`;
}

function navigation(session: ConsoleSession): SafeHtml {
  return html`<nav>
    <a href="/console/discovery">Discovery</a>
    <a href="/console/nodes">Nodes</a>
    <span class="tenant">tenant <strong>${session.principal.tenantId}</strong></span>
    <form method="post" action="/console/sign-out" class="sign-out">${csrfField(session)}<button type="submit">Sign out</button></form>
  </nav>`;
}

export function page(frame: PageFrame): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Ironflow console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body${frame.refreshSeconds ? html` data-refresh-seconds="${frame.refreshSeconds}"` : ''}>
<header><span class="brand">Ironflow console</span>${frame.session ? navigation(frame.session) : ''}</header>
<main>
<h1>${frame.title}</h1>
${frame.flash ? html`<p class="flash flash-${frame.flash.kind}" role="status">${frame.flash.text}</p>` : ''}
${frame.body}
</main>
</body>
</html>
`.value;
}
