// HTML built by a tagged template that escapes every interpolated value, so a page cannot
// carry markup from data (MACs, UUIDs and relays come from an untrusted network, error
// messages quote inputs). Only SafeHtml, which this template makes, passes unescaped.

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => entities[c] as string);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** html`<td>${mac}</td>`: values are escaped (attribute values must be quoted). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}
