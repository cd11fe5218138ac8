// A tagged template that escapes every interpolated value unless it is already SafeHtml:
//   html`<p title="${userText}">${userText}</p>`
// Arrays are joined; null, undefined and false render nothing. Attributes must be quoted.
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ENTITIES[c]!);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Markup that is trusted as it is (constants only, never user input). */
export const raw = (markup: string) => new SafeHtml(markup);

/** An http(s) URL to link to, or null: platform-provided URLs must not become `javascript:` links. */
export { safeHttpUrl } from '../lib/urls.ts';
