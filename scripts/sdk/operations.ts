// The API's operations as the SDK generators read them from the OpenAPI document: where each goes
// (method and path), what it takes (path values in order, query, body and its media type, an
// Idempotency-Key), what it answers, whether its listing has cursor pages, and its name in the
// clients (names.ts).
import { OPERATION_NAMES } from './names.ts';

type Json = any;

export interface SdkOperation {
  id: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Below `/v1`, with `{name}` for each path value. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  idempotent: boolean;
  body?: 'application/json' | 'text/csv';
  bodyRequired: boolean;
  answer?: 'application/json' | 'text/csv';
  /** A listing of `{ data, nextCursor }` pages, asked with `cursor`. */
  paged: boolean;
  summary: string;
  resource: string;
  name: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Each operation of the document, in the document's order of paths; a document with an operation names.ts does not name is refused. */
export function sdkOperations(doc: Json): SdkOperation[] {
  const out: SdkOperation[] = [];
  const unnamed: string[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const names = OPERATION_NAMES[op.operationId];
      if (!names) {
        unnamed.push(op.operationId);
        continue;
      }
      const params: Json[] = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      const answerTypes = success.flatMap((s) => Object.keys(op.responses[s].content ?? {}));
      const bodyType = Object.keys(op.requestBody?.content ?? {})[0];
      const queryParams = params.filter((p) => p.in === 'query').map((p) => p.name as string);
      const answerSchema = success.map((s) => op.responses[s].content?.['application/json']?.schema).find(Boolean);
      out.push({
        id: op.operationId,
        method: method.toUpperCase() as SdkOperation['method'],
        path: path.replace(/^\/v1/, ''),
        pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        queryParams,
        idempotent: params.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key'),
        ...(bodyType ? { body: bodyType as SdkOperation['body'] } : {}),
        bodyRequired: op.requestBody?.required === true,
        ...(answerTypes[0] ? { answer: answerTypes[0] as SdkOperation['answer'] } : {}),
        paged: queryParams.includes('cursor') && hasNextCursor(doc, answerSchema),
        summary: String(op.summary ?? op.operationId),
        resource: names[0],
        name: names[1],
      });
    }
  }
  if (unnamed.length) throw new Error(`scripts/sdk/names.ts names no SDK method for ${unnamed.join(', ')}`);
  return out;
}

function hasNextCursor(doc: Json, schema: Json): boolean {
  const resolved = schema?.$ref ? doc.components.schemas[String(schema.$ref).split('/').at(-1)!] : schema;
  return Boolean(resolved?.properties?.nextCursor && resolved?.properties?.data);
}

/**
 * The document the SDKs' types are generated from: every schema, and of each operation only what
 * a client reads (its parameters, its body, its success answers without their headers), so the
 * generated types stay small.
 */
export function clientDocument(doc: Json): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    paths[path] = {};
    for (const [method, op] of Object.entries<Json>(item)) {
      if (!(METHODS as readonly string[]).includes(method)) continue;
      const responses = Object.fromEntries(
        Object.entries<Json>(op.responses)
          .filter(([status]) => status.startsWith('2'))
          .map(([status, r]) => [status, { description: r.description ?? '', ...(r.content ? { content: r.content } : {}) }]),
      );
      const { summary, operationId, parameters, requestBody } = op;
      paths[path][method] = {
        summary,
        operationId,
        ...(parameters ? { parameters: parameters.filter((p: Json) => p.in !== 'header') } : {}),
        ...(requestBody ? { requestBody } : {}),
        responses,
      };
    }
  }
  return { openapi: doc.openapi, info: doc.info, paths, components: { schemas: doc.components.schemas } };
}
