import { Elysia } from 'elysia';

/**
 * Every Elysia instance of the API. `normalize: false`: a body with a field the schema does not
 * name is refused (422), not silently stripped — a misspelt field must not be ignored.
 */
export const router = (name?: string) => new Elysia({ normalize: false, ...(name ? { name } : {}) });
