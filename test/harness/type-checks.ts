// Type-level checks of the fakes' schemas against the platforms' published types (the shapes
// tests): each evaluates to `true` or `false` at compile time, and a test states which it must
// be, so `tsc` fails when a schema and its published type part ways.

/** true only when A and B are the same type. */
export type Exactly<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * The same type as written by TypeBox's Static: `?: X | undefined` as `?: X` (the same thing
 * without exactOptionalPropertyTypes), arrays mutable, at every level.
 */
export type Normal<T> = [T] extends [readonly (infer E)[]]
  ? Normal<E>[]
  : [T] extends [object]
    ? { [K in keyof T]: Normal<Exclude<T[K], undefined>> }
    : T;

/** true only when A and B are the same type once both are Normal: the same keys, each as optional and of the same type. */
export type Equals<A, B> = Exactly<Normal<A>, Normal<B>>;

/** An intersection as one object type, so Exactly compares members, not how the type is written. */
export type Flat<T> = { [K in keyof T]: T[K] };

/**
 * true when every field of A is a field of B (recursively, through objects and lists) with a
 * value B's field takes: a schema that has a field the published type lacks, or a looser value,
 * is `false`.
 */
export type Within<A, B> = [A] extends [readonly (infer E)[]]
  ? [NonNullable<B>] extends [readonly (infer F)[]]
    ? Within<E, F>
    : false
  : [A] extends [object]
    ? [Exclude<keyof A, keyof NonNullable<B>>] extends [never]
      ? [{ [K in keyof A]-?: Within<NonNullable<A[K]>, NonNullable<B>[K & keyof NonNullable<B>]> }[keyof A]] extends [true | never]
        ? true
        : false
      : false
    : [A] extends [NonNullable<B>]
      ? true
      : false;

/** Compiles only when its argument is `true`: `agrees<Equals<A, B>>()`. */
export const agrees = <T extends true>(): T | undefined => undefined;
