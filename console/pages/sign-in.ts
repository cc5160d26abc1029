// The sign-in page: one field for an API credential (the bearer the REST API takes).
import { html } from '../html';
import { page } from '../layout';

export function signInPage(input: { formToken: string; error?: string }): string {
  return page({
    title: 'Sign in',
    ...(input.error ? { flash: { kind: 'error', text: input.error } } : {}),
    body: html`<form method="post" action="/console/sign-in" class="sign-in">
      <input type="hidden" name="csrf" value="${input.formToken}" />
      <label for="credential">API credential</label>
      <input id="credential" name="credential" type="password" autocomplete="off" required maxlength="512" placeholder="ifk_…" />
      <button type="submit">Sign in</button>
      <p class="hint">The credential stays on the server for this session (8 h at most, 30 min idle) and is never shown again.</p>
    </form>`,
  });
}
