/** Renders an OpenAPI 3.1 document as one self-contained HTML reference page: no script, no external asset. */

type Json = Record<string, unknown>;

export const REFERENCE_STYLESHEET = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d232b;background:#fafbfc}
header,main,nav{max-width:68rem;margin:0 auto;padding:0 1.5rem}
header{padding-top:2rem}h1{margin:0 0 .25rem}h2{margin-top:2.5rem;border-bottom:2px solid #d5dae0}
article{background:#fff;border:1px solid #d5dae0;border-radius:6px;padding:1rem 1.25rem;margin:1rem 0}
h3{margin:0 0 .5rem;font-size:1.1rem}code,pre{font-family:ui-monospace,monospace;font-size:.92em}
pre{background:#f0f2f5;padding:.75rem;border-radius:4px;overflow-x:auto}
.method{display:inline-block;min-width:4.2rem;text-align:center;border-radius:4px;color:#fff;padding:0 .4rem;margin-right:.4rem}
.get{background:#1f6feb}.post{background:#1a7f37}.put{background:#9a6700}.patch{background:#8250df}.delete{background:#cf222e}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;vertical-align:top;border-bottom:1px solid #e4e7eb;padding:.3rem .5rem}
th{font-size:.85rem;color:#57606a}.muted{color:#57606a}.scope{font-weight:600}
nav ul{columns:2;padding-left:1.2rem}nav li{break-inside:avoid}
`;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function escape(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The little Markdown the descriptions use: paragraphs, indented code blocks, `code`, **bold**. */
function markdown(text: string): string {
  return text
    .split(/\n\s*\n/)
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((line) => line.startsWith('    '))) {
        return `<pre>${escape(lines.map((line) => line.slice(4)).join('\n'))}</pre>`;
      }
      const inline = escape(block.replace(/\n/g, ' '))
        .replace(/`([^`]+)`/g, '<code>$1</code>')
        .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
      return `<p>${inline}</p>`;
    })
    .join('\n');
}

const asObject = (value: unknown): Json =>
  value !== null && typeof value === 'object' ? (value as Json) : {};
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function typeLabel(schema: Json): string {
  const anyOf = asArray(schema.anyOf).map(asObject);
  if (anyOf.length > 0) {
    // Literal unions arrive as `const` or, from @fastify/swagger, as one-value `enum`s.
    const literal = (option: Json): unknown[] =>
      'const' in option ? [option.const] : Array.isArray(option.enum) ? option.enum : [];
    if (anyOf.every((option) => literal(option).length > 0)) {
      return `one of ${anyOf
        .flatMap(literal)
        .map((value) => JSON.stringify(value))
        .join(', ')}`;
    }
    return anyOf.map(typeLabel).join(' or ');
  }
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum))
    return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(', ')}`;
  const type = schema.type;
  if (type === 'array') return `array of ${typeLabel(asObject(schema.items))}`;
  if (Array.isArray(type)) return type.join(' or ');
  if (type === 'string' && typeof schema.format === 'string') return `string (${schema.format})`;
  if (type === 'object' && schema.properties === undefined && schema.additionalProperties !== undefined) {
    return 'object of strings';
  }
  return typeof type === 'string' ? type : 'any';
}

function constraints(schema: Json): string[] {
  const notes: string[] = [];
  const add = (key: string, label: string) => {
    if (schema[key] !== undefined) notes.push(`${label} ${JSON.stringify(schema[key])}`);
  };
  add('minLength', 'min length');
  add('maxLength', 'max length');
  add('minimum', 'min');
  add('maximum', 'max');
  add('minItems', 'min items');
  add('maxItems', 'max items');
  add('default', 'default');
  add('pattern', 'pattern');
  if (schema.writeOnly === true) notes.push('write-only');
  return notes;
}

interface Row {
  name: string;
  type: string;
  required: boolean;
  notes: string;
}

/** An object schema as rows, nested objects and arrays of objects flattened to dotted names. */
function rows(schema: Json, prefix = ''): Row[] {
  const properties = asObject(schema.properties);
  const required = new Set(asArray(schema.required).map(String));
  const out: Row[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    const property = asObject(raw);
    const path = `${prefix}${name}`;
    const notes = [
      typeof property.description === 'string' ? property.description : '',
      ...constraints(property),
    ]
      .filter((note) => note !== '')
      .join('; ');
    out.push({ name: path, type: typeLabel(property), required: required.has(name), notes });
    if (property.properties !== undefined) out.push(...rows(property, `${path}.`));
    const items = asObject(property.items);
    if (items.properties !== undefined) out.push(...rows(items, `${path}[].`));
  }
  return out;
}

function schemaTable(schema: Json): string {
  const list = rows(schema);
  if (list.length === 0) {
    return `<p class="muted">${escape(typeLabel(schema))}${schema.type === 'object' ? ' (no fields)' : ''}</p>`;
  }
  const closed =
    schema.additionalProperties === false ? '<p class="muted">No other fields are accepted.</p>' : '';
  return (
    '<table><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Notes</th></tr></thead><tbody>' +
    list
      .map(
        (row) =>
          `<tr><td><code>${escape(row.name)}</code></td><td>${escape(row.type)}</td>` +
          `<td>${row.required ? 'yes' : 'no'}</td><td>${escape(row.notes)}</td></tr>`,
      )
      .join('') +
    `</tbody></table>${closed}`
  );
}

function parametersTable(parameters: Json[]): string {
  if (parameters.length === 0) return '';
  return (
    '<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Notes</th></tr></thead><tbody>' +
    parameters
      .map((parameter) => {
        const schema = asObject(parameter.schema);
        const notes = [
          typeof parameter.description === 'string' ? parameter.description : '',
          typeof schema.description === 'string' ? schema.description : '',
          ...constraints(schema),
        ]
          .filter((note) => note !== '')
          .join('; ');
        return (
          `<tr><td><code>${escape(parameter.name)}</code></td><td>${escape(parameter.in)}</td>` +
          `<td>${escape(typeLabel(schema))}</td><td>${parameter.required === true ? 'yes' : 'no'}</td>` +
          `<td>${escape(notes)}</td></tr>`
        );
      })
      .join('') +
    '</tbody></table>'
  );
}

function contentSchemas(content: unknown): string {
  return Object.entries(asObject(content))
    .map(
      ([type, media]) =>
        `<p class="muted"><code>${escape(type)}</code></p>${schemaTable(asObject(asObject(media).schema))}`,
    )
    .join('');
}

function operationAnchor(method: string, path: string): string {
  return `${method}-${path}`
    .replace(/[^a-zA-Z0-9]+/g, '-')
    .replace(/-+$/, '')
    .toLowerCase();
}

function renderOperation(method: string, path: string, operation: Json): string {
  const security = asArray(operation.security).map(asObject);
  const scopes = security.flatMap((requirement) => Object.values(requirement).flatMap(asArray)).map(String);
  const parts = [
    `<article id="${escape(operationAnchor(method, path))}">`,
    `<h3><span class="method ${method}">${method.toUpperCase()}</span><code>${escape(path)}</code></h3>`,
    typeof operation.summary === 'string' ? `<p>${escape(operation.summary)}</p>` : '',
    typeof operation.description === 'string' ? markdown(operation.description) : '',
    scopes.length > 0
      ? `<p>Access token scope: <span class="scope">${escape(scopes.join(' '))}</span></p>`
      : '<p>No access token needed.</p>',
    parametersTable(asArray(operation.parameters).map(asObject)),
  ];
  const body = asObject(operation.requestBody);
  if (body.content !== undefined) {
    parts.push(
      `<h4>Request body${body.required === true ? '' : ' (optional)'}</h4>`,
      contentSchemas(body.content),
    );
  }
  parts.push('<h4>Responses</h4>');
  for (const [status, raw] of Object.entries(asObject(operation.responses))) {
    const response = asObject(raw);
    const description = typeof response.description === 'string' ? response.description : '';
    if (status.startsWith('4')) {
      // The same problem shape everywhere: described once, under Errors.
      parts.push(`<p><strong>${escape(status)}</strong> <a href="#errors">problem details</a></p>`);
      continue;
    }
    parts.push(`<p><strong>${escape(status)}</strong> ${escape(description)}</p>`);
    if (response.content !== undefined) parts.push(contentSchemas(response.content));
  }
  parts.push('</article>');
  return parts.join('\n');
}

/** The whole reference page. */
/** The problem schema, from the first operation that documents a 4xx response. */
function problemSchema(paths: Json): Json | undefined {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(asObject(item))) {
      for (const [status, response] of Object.entries(asObject(asObject(operation).responses))) {
        const content = asObject(asObject(response).content);
        const media = Object.values(content)[0];
        if (status.startsWith('4') && media !== undefined) return asObject(asObject(media).schema);
      }
    }
  }
  return undefined;
}

export function renderReference(document: Json): string {
  const info = asObject(document.info);
  const title = typeof info.title === 'string' ? info.title : 'API';
  const servers = asArray(document.servers).map((server) => String(asObject(server).url));
  const paths = asObject(document.paths);
  const tags = asArray(document.tags).map(asObject);
  const problem = problemSchema(paths);
  const byTag = new Map<string, Array<{ method: string; path: string; operation: Json }>>();
  for (const tag of tags) byTag.set(String(tag.name), []);
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = asObject(rawItem);
    for (const method of METHODS) {
      if (item[method] === undefined) continue;
      const operation = asObject(item[method]);
      const tag = String(asArray(operation.tags)[0] ?? 'other');
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)?.push({ method, path, operation });
    }
  }

  const nav = [...byTag]
    .map(
      ([tag, operations]) =>
        `<li>${escape(tag)}<ul>` +
        operations
          .map(
            ({ method, path }) =>
              `<li><a href="#${escape(operationAnchor(method, path))}">${method.toUpperCase()} ${escape(path)}</a></li>`,
          )
          .join('') +
        '</ul></li>',
    )
    .join('');
  const sections = [...byTag]
    .map(([tag, operations]) => {
      const description = tags.find((candidate) => candidate.name === tag)?.description;
      return (
        `<section id="tag-${escape(tag)}"><h2>${escape(tag)}</h2>` +
        (typeof description === 'string' ? markdown(description) : '') +
        operations.map(({ method, path, operation }) => renderOperation(method, path, operation)).join('\n') +
        '</section>'
      );
    })
    .join('\n');

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} reference</title>
<style>${REFERENCE_STYLESHEET}</style>
</head>
<body>
<header>
<h1>${escape(title)}</h1>
<p class="muted">Version ${escape(info.version)} · OpenAPI ${escape(document.openapi)} · Server ${servers.map((url) => `<code>${escape(url)}</code>`).join(', ')} ·
This page as JSON: the same URL with <code>Accept: application/json</code>.</p>
</header>
<main>
<section id="overview">${markdown(typeof info.description === 'string' ? info.description : '')}</section>
<section id="errors"><h2>Errors</h2><p>Every 4xx and 5xx answer has this <code>application/problem+json</code> body:</p>
${problem === undefined ? '' : schemaTable(problem)}</section>
<nav aria-label="Operations"><h2>Operations</h2><ul>${nav}</ul></nav>
${sections}
</main>
</body>
</html>
`;
}
