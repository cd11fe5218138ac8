// The set-up most publishing tests share: a fake Mastodon instance and a post stack (the app, a
// worker and a time-skipping Temporal server), started before the file's tests and stopped after.
import { afterAll, beforeAll } from 'bun:test';
import { startFakeMastodon, type FakeMastodon } from '../fakes/mastodon.ts';
import { startPostStack, type PostStackOptions } from './post-stack.ts';

export type PostStack = Awaited<ReturnType<typeof startPostStack>>;

/** Registers the file's set-up and tear-down; `ready` receives the stack and the fake once started. */
export function useMastodonStack(options: PostStackOptions, ready: (stack: PostStack, fake: FakeMastodon) => void): void {
  let stack: PostStack | undefined;
  let fake: FakeMastodon | undefined;
  beforeAll(async () => {
    fake = await startFakeMastodon();
    stack = await startPostStack(options);
    ready(stack, fake);
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.stop();
  });
}
