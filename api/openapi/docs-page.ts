// GET /v1/docs: the OpenAPI document as one self-contained HTML page (server-rendered, inline CSS,
// no script and nothing fetched from anywhere: the machines it runs on may have no internet).
type Json = Record<string, any>;

const esc = (s: unknown) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** `code` spans for backticks, paragraphs for blank lines, list items for "- " lines. */
function text(s: string | undefined): string {
  if (!s) return '';
  const inline = (t: string) => esc(t).replace(/`([^`]+)`/g, '<code>$1</code>');
  return s
    .split(/\n\n+/)
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((l) => l.startsWith('- '))) return `<ul>${lines.map((l) => `<li>${inline(l.slice(2))}</li>`).join('')}</ul>`;
      return `<p>${inline(block)}</p>`;
    })
    .join('');
}

const refName = (ref: string) => ref.split('/').pop()!;
const schemaLink = (name: string) => `<a href="#schema-${esc(name)}">${esc(name)}</a>`;

/** A short, readable type: `string (date-time)`, `integer | null`, `array of Post`, `"a" | "b"`. */
function typeOf(s: Json | undefined): string {
  if (!s || Object.keys(s).length === 0) return 'any';
  if (s.$ref) return schemaLink(refName(s.$ref));
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  if (s.anyOf) return (s.anyOf as Json[]).map(typeOf).join(' | ');
  if (s.enum) return (s.enum as unknown[]).map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ');
  if (s.type === 'array') return `array of ${typeOf(s.items)}`;
  if (s.type === 'object' && s.patternProperties && !s.properties) {
    const [key, value] = Object.entries(s.patternProperties as Json)[0] ?? ['', {}];
    return `object (${key === '^(.*)$' ? 'string' : `<code>${esc(key)}</code>`} → ${typeOf(value)})`;
  }
  return `${esc(s.type ?? 'any')}${s.format ? ` (${esc(s.format)})` : ''}`;
}

function constraints(s: Json): string {
  const out: string[] = [];
  const add = (label: string, v: unknown) => v !== undefined && out.push(`${label} ${esc(typeof v === 'string' ? v : JSON.stringify(v))}`);
  add('min length', s.minLength);
  add('max length', s.maxLength);
  add('minimum', s.minimum);
  add('maximum', s.maximum);
  add('min items', s.minItems);
  add('max items', s.maxItems);
  add('max properties', s.maxProperties);
  add('default', s.default);
  if (s.uniqueItems) out.push('unique items');
  if (s.minProperties) out.push(`at least ${esc(s.minProperties)} field(s)`);
  // The character patterns of api/schemas.ts only restate max length (and no NUL): not shown.
  if (s.pattern && !s.pattern.includes('\\ud800-\\udbff][\\udc00-\\udfff]){')) out.push(`pattern <code>${esc(s.pattern)}</code>`);
  return out.join(', ');
}

/** Rows for an object schema's fields; inline nested objects become dotted paths. */
function fieldRows(s: Json, prefix = ''): string[] {
  const rows: string[] = [];
  const required = new Set<string>(s.required ?? []);
  for (const [name, raw] of Object.entries((s.properties ?? {}) as Json)) {
    const f = raw as Json;
    const path = `${prefix}${name}`;
    rows.push(
      `<tr><td><code>${esc(path)}</code></td><td>${typeOf(f)}</td><td>${required.has(name) ? 'yes' : 'no'}</td><td>${text(f.description)}${constraints(f) ? `<div class="c">${constraints(f)}</div>` : ''}</td></tr>`,
    );
    const nested = f.type === 'object' && f.properties ? f : f.anyOf?.find((x: Json) => x.type === 'object' && x.properties);
    if (nested) rows.push(...fieldRows(nested, `${path}.`));
    if (f.type === 'array' && f.items?.type === 'object' && f.items.properties) rows.push(...fieldRows(f.items, `${path}[].`));
  }
  return rows;
}

function fieldsTable(s: Json | undefined, components: Json): string {
  if (!s) return '';
  const resolved = s.$ref ? components.schemas?.[refName(s.$ref)] : s;
  if (!resolved?.properties) return `<p>${typeOf(s)}</p>`;
  const note = s.$ref ? `<p>${schemaLink(refName(s.$ref))}</p>` : '';
  const extra = resolved.additionalProperties === false ? '<p class="c">No other fields.</p>' : '';
  return `${note}<table><tr><th>field</th><th>type</th><th>required</th><th>notes</th></tr>${fieldRows(resolved).join('')}</table>${extra}`;
}

function operationSection(path: string, method: string, op: Json, components: Json): string {
  const id = `op-${op.operationId}`;
  const params = (op.parameters ?? []) as Json[];
  const paramTable = params.length
    ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>required</th><th>notes</th></tr>${params
        .map(
          (p) =>
            `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${typeOf(p.schema)}</td><td>${p.required ? 'yes' : 'no'}</td><td>${text(p.description)}${constraints(p.schema ?? {}) ? `<div class="c">${constraints(p.schema)}</div>` : ''}</td></tr>`,
        )
        .join('')}</table>`
    : '';
  const [bodyType, bodyContent] = Object.entries((op.requestBody?.content ?? {}) as Json)[0] ?? [];
  const body = op.requestBody
    ? `<h4>Request body <span class="c">${esc(bodyType)}</span></h4>${text(op.requestBody.description)}${
        bodyType === 'application/json' ? fieldsTable((bodyContent as Json).schema, components) : ''
      }`
    : '';
  const responses = Object.entries(op.responses as Json)
    .map(([status, r]) => {
      const schema = (r as Json).content?.['application/json']?.schema;
      return `<tr><td class="s${status[0]}">${esc(status)}</td><td>${schema ? typeOf(schema) : '—'}</td><td>${text((r as Json).description)}</td></tr>`;
    })
    .join('');
  return `<section id="${esc(id)}">
<h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>/v1${esc(path)}</code></h3>
<p><strong>${esc(op.summary)}</strong> · scope <code class="scope">${esc(op['x-required-scope'])}</code></p>
${text(op.description)}
${paramTable}
${body}
<h4>Responses</h4><table><tr><th>status</th><th>body</th><th>when</th></tr>${responses}</table>
</section>`;
}

export function renderDocsPage(doc: Json): string {
  const components = doc.components ?? {};
  const ops: { path: string; method: string; op: Json }[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json))
    for (const [method, op] of Object.entries(item as Json)) ops.push({ path, method, op: op as Json });
  const tags = (doc.tags as Json[]).map((t) => t.name as string);
  const byTag = (tag: string) => ops.filter((o) => o.op.tags?.[0] === tag);
  const nav = tags
    .map(
      (tag) =>
        `<li>${esc(tag)}<ul>${byTag(tag)
          .map(
            (o) =>
              `<li><a href="#op-${esc(o.op.operationId)}"><span class="m ${esc(o.method)}">${esc(o.method.toUpperCase())}</span> ${esc(o.path)}</a></li>`,
          )
          .join('')}</ul></li>`,
    )
    .join('');
  const sections = tags
    .map((tag) => {
      const t = (doc.tags as Json[]).find((x) => x.name === tag)!;
      return `<h2 id="tag-${esc(tag)}">${esc(tag)}</h2>${text(t.description)}${byTag(tag)
        .map((o) => operationSection(o.path, o.method, o.op, components))
        .join('')}`;
    })
    .join('');
  const schemas = Object.entries(components.schemas as Json)
    .map(
      ([name, s]) =>
        `<section id="schema-${esc(name)}"><h3>${esc(name)}</h3>${text((s as Json).description)}${fieldsTable(s as Json, components)}</section>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} ${esc(doc.info.version)} — reference</title>
<style>
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2330;background:#fff}
nav{position:fixed;top:0;left:0;bottom:0;width:270px;overflow:auto;padding:16px;background:#f5f6f8;border-right:1px solid #e1e4ea;font-size:14px}
nav ul{list-style:none;padding-left:8px;margin:4px 0 12px}nav a{text-decoration:none;color:inherit}
main{margin-left:302px;max-width:980px;padding:16px 32px 64px}
h1{margin-top:0}h2{border-bottom:2px solid #e1e4ea;padding-bottom:4px;margin-top:48px}
section{border-top:1px solid #e1e4ea;padding-top:8px;margin-top:24px}
table{border-collapse:collapse;width:100%;margin:8px 0;font-size:14px}th,td{border:1px solid #e1e4ea;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f5f6f8}
td p,td ul{margin:0}code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f2f3f6;padding:0 3px;border-radius:3px}
.m{display:inline-block;min-width:52px;text-align:center;font:bold 12px ui-monospace,monospace;color:#fff;border-radius:3px;padding:1px 4px}
.get{background:#2f7d4f}.post{background:#2b5fb3}.patch{background:#a66300}.put{background:#6b45a8}.delete{background:#b3322b}
.c{color:#5c6577;font-size:13px}.scope{background:#fff4d6}.s2{color:#2f7d4f;font-weight:bold}.s4,.s5{color:#b3322b;font-weight:bold}
</style></head>
<body><nav><strong>${esc(doc.info.title)}</strong> <span class="c">${esc(doc.info.version)}</span><ul>${nav}<li><a href="#schemas">Schemas</a></li></ul>
<p class="c">Machine-readable: <a href="openapi.json">openapi.json</a> (OpenAPI ${esc(doc.openapi)})</p></nav>
<main><h1>${esc(doc.info.title)} <span class="c">${esc(doc.info.version)}</span></h1>
<p>${esc(doc.info.summary ?? '')}</p>${text(doc.info.description)}
<p>Base URL: <code>${esc(doc.servers?.[0]?.url ?? '/v1')}</code>.</p>
<h4>Authentication</h4>${text(components.securitySchemes?.bearerAuth?.description)}
${sections}
<h2 id="schemas">Schemas</h2>${schemas}
</main></body></html>`;
}
