// What a connector test expects of a call that must fail: a classified PlatformError, returned so
// the test can read its kind, status and message.
import { expect } from 'bun:test';
import { PlatformError } from '../../platforms/types.ts';

export async function failure(promise: Promise<unknown>): Promise<PlatformError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PlatformError);
  return err as PlatformError;
}
