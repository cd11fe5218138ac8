// The types of each operation's parts, read from the generated document types
// (generated/openapi.ts): its body, its query, its success answer, a listing's item.
import type { operations } from './generated/openapi.ts';

export type OperationId = keyof operations;

type Content<C> = C extends { content: { 'application/json': infer J } }
  ? J
  : C extends { content: { 'text/csv': infer T } }
    ? T
    : undefined;

/** The body an operation takes (JSON, or the CSV text of an import). */
export type Body<O extends OperationId> = operations[O] extends { requestBody?: infer R } ? Content<NonNullable<R>> : never;

/** The query an operation takes. */
export type Query<O extends OperationId> = operations[O]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;

/** What an operation answers on success (undefined for a 204). */
export type Answer<O extends OperationId> = Content<operations[O]['responses'][keyof operations[O]['responses']]>;

/** An item of a listing's `data`. */
export type Item<O extends OperationId> = Answer<O> extends { data: (infer I)[] } ? I : never;

export type { components, operations } from './generated/openapi.ts';
