// The set-up most publishing tests share: a fake Mastodon instance and a post stack (the app, a
// worker and a time-skipping Temporal server), started before the file's tests and stopped after.
import { afterAll, beforeAll } from 'bun:test';
import { startFakeMastodon, type FakeMastodon } from '../fakes/mastodon.ts';
import { startPostStack, type PostStackOptions } from './post-stack.ts';
import { addChannel } from '../../domain/channels.ts';
import { makeKey, makeOrg } from './fixtures.ts';

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

/** An organization (ENTERPRISE unless said), an API key of it, and one MASTODON channel on the fake whose token it accepts. */
export async function mastodonAccount(
  stack: PostStack,
  fake: FakeMastodon,
  opts: { plan?: string; name?: string } = {},
): Promise<{ orgId: string; key: string; channelId: string }> {
  const org = await makeOrg(opts.plan ?? 'ENTERPRISE');
  const { key } = await makeKey(org.id);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: opts.name ?? 'mastodon',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  return { orgId: org.id, key, channelId: channel.id };
}
