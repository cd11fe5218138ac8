// Raw SQL through MikroORM's connection, inside the EntityManager's transaction when it has one
// (so a statement sees, and is rolled back with, the rest of that transaction). Values are always
// bound parameters (`?`); rows are typed by the caller's named row interface.
import type { EntityManager } from '@mikro-orm/postgresql';

export function sql<Row = Record<string, unknown>>(em: EntityManager, text: string, params: unknown[] = []): Promise<Row[]> {
  return em.getConnection().execute<Row[]>(text, params, 'all', em.getTransactionContext());
}
