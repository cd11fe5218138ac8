import { defineEntity, p } from '@mikro-orm/core';

// Abstract bases (no table of their own): an entity `extends` one and gets its columns. MikroORM
// discovers a base through `extends`, so it is not listed in ALL_ENTITIES.

/** `createdAt`, set when the row is inserted. */
export const Created = defineEntity({
  name: 'Created',
  abstract: true,
  properties: {
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** `createdAt` and `updatedAt`, the latter set again at every flush that changes the row. */
export const Timestamped = defineEntity({
  name: 'Timestamped',
  abstract: true,
  extends: Created,
  properties: {
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
