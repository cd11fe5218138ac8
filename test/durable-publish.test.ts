// A publish the platform accepted but Postgres then failed to record: Discord and
// Telegram cannot look a sent message up, so the retry must learn from Temporal — the activity's
// heartbeat details — that the message is out, even on a fresh worker with fresh connectors (no
// in-process memory left). Through the real workflow on the time-skipping server; the failure is
// a real Postgres error (a trigger refusing the write), not a stub.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { defaultPayloadConverter } from '@temporalio/common';
import { PostChannel } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { createDiscordConnector } from '../platforms/discord.ts';
import { createTelegramConnector } from '../platforms/telegram.ts';
import type { Connectors } from '../platforms/types.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { startFakeDiscord, type FakeDiscord } from './fakes/discord.ts';
import { PUBLIC_CHANNEL, startFakeTelegram, type FakeTelegram } from './fakes/telegram.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let discord: FakeDiscord;
let telegram: FakeTelegram;
// Looked up by the activities at each publish: replacing an entry gives the next worker a fresh
// connector, without the "already sent" memory of the old one.
const connectors: Connectors = {};
const freshConnectors = () => {
  connectors.DISCORD = createDiscordConnector({ baseUrl: discord.apiBase, timeoutMs: 2000 });
  connectors.TELEGRAM = createTelegramConnector({ baseUrl: telegram.url, timeoutMs: 2000 });
};

beforeAll(async () => {
  discord = await startFakeDiscord();
  telegram = await startFakeTelegram();
  freshConnectors();
  // No workflow cache: a restarted worker must not leave the workflow on the old sticky queue
  // (see test/posts.test.ts "crash safety").
  stack = await startPostStack({ connectors, maxCachedWorkflows: 0 });
});
afterAll(async () => {
  await stack?.stop();
  await discord?.stop();
  await telegram?.stop();
});

/**
 * Makes Postgres refuse to mark the channel's post `published`: the first `times` tries raise an
 * error (a sequence counts them; its value survives the rolled-back statement).
 */
async function refusePublishedWrites(channelId: string, times: number) {
  const tag = channelId.toLowerCase().replace(/[^a-z0-9]/g, '');
  const conn = stack.h.orm.em.fork().getConnection();
  await conn.execute(`create sequence refused_${tag}`);
  await conn.execute(`create function refuse_${tag}() returns trigger language plpgsql as $$
    begin
      if new.status = 'published' and new.channel_id = '${channelId}' and nextval('refused_${tag}') <= ${times} then
        raise exception 'injected: the database refused the write';
      end if;
      return new;
    end $$`);
  await conn.execute(`create trigger refuse_${tag} before update on post_channels for each row execute function refuse_${tag}()`);
  return {
    refused: async () => {
      const [row] = await conn.execute<{ last_value: string; is_called: boolean }[]>(`select last_value, is_called from refused_${tag}`);
      return row!.is_called ? Math.min(Number(row!.last_value), times) : 0;
    },
    remove: async () => {
      await conn.execute(`drop trigger if exists refuse_${tag} on post_channels`);
      await conn.execute(`drop function if exists refuse_${tag}()`);
      await conn.execute(`drop sequence if exists refused_${tag}`);
    },
  };
}

async function channelFor(platform: 'DISCORD' | 'TELEGRAM') {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const credentials =
    platform === 'DISCORD' ? { webhookUrl: discord.webhookUrl() } : { botToken: telegram.token, chatId: String(PUBLIC_CHANNEL.id) };
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform,
    name: `${platform} channel`,
    credentials,
  });
  return { key, channel };
}

const sentWith = (platform: 'DISCORD' | 'TELEGRAM', text: string) =>
  platform === 'DISCORD'
    ? discord.messages.filter((m) => m.content === text).map((m) => m.id)
    : telegram.messages.filter((m) => m.text === text).map((m) => String(m.message_id));

/** The publish activity of the post's workflow that is waiting for its next attempt (polled in real time). */
async function waitForRetryScheduled(postId: string) {
  const handle = stack.env.client.workflow.getHandle(postWorkflowId(postId));
  for (let i = 0; i < 1000; i++) {
    const { raw } = await handle.describe();
    const pending = raw.pendingActivities?.find((a) => a.activityType?.name === 'publishToChannel' && (a.attempt ?? 0) >= 2);
    if (pending) return pending;
    await Bun.sleep(20);
  }
  throw new Error('the first publish attempt never failed');
}

describe('a publish recorded durably before the Postgres write', () => {
  for (const platform of ['DISCORD', 'TELEGRAM'] as const) {
    test(`${platform}: the write fails for the whole first attempt → the retry, on a fresh worker and connector, records the first message and sends nothing`, async () => {
      const { key, channel } = await channelFor(platform);
      const refusal = await refusePublishedWrites(channel.id, 1_000_000);
      try {
        await stack.syncClock();
        const text = `durable ${platform} ${crypto.randomUUID()}`;
        const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channel.id] } });
        expect(r.status).toBe(201);

        // The platform took the message; the database refuses to record it, and the attempt is
        // retrying the write in place.
        for (let i = 0; i < 1000 && (await refusal.refused()) < 2; i++) await Bun.sleep(10);
        const sent = sentWith(platform, text);
        expect(sent).toHaveLength(1);
        // From now on every attempt, on any worker, has connectors that remember nothing.
        freshConnectors();

        const pending = await waitForRetryScheduled(r.body.id);
        expect(pending.lastFailure?.message).toContain('injected: the database refused the write');
        // Temporal holds the platform's answer for the next attempt.
        const details = defaultPayloadConverter.fromPayload<{ published: { platformPostId: string } }>(
          pending.heartbeatDetails!.payloads![0]!,
        );
        expect(details.published.platformPostId).toBe(sent[0]!);

        // The database is back; another worker takes the retry.
        await refusal.remove();
        await stack.restartWorker();
        await stack.settle(r.body.id);

        expect(sentWith(platform, text)).toEqual(sent);
        const got = await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key });
        expect(got.body.status).toBe('published');
        expect(got.body.channels[0]).toMatchObject({ status: 'published', platformPostId: sent[0], error: null });
        // The platform was called in the first attempt only.
        const pc = await stack.h.orm.em.fork().findOneOrFail(PostChannel, { post: r.body.id });
        expect(pc.attempts).toBe(1);
      } finally {
        await refusal.remove();
      }
    });
  }

  test('a short refusal is retried within the attempt: one message, published, no second attempt', async () => {
    const { key, channel } = await channelFor('DISCORD');
    const refusal = await refusePublishedWrites(channel.id, 2);
    try {
      await stack.syncClock();
      const text = `brief outage ${crypto.randomUUID()}`;
      const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channel.id] } });
      expect(r.status).toBe(201);
      await stack.settle(r.body.id);
      expect(await refusal.refused()).toBe(2);
      const sent = sentWith('DISCORD', text);
      expect(sent).toHaveLength(1);
      const got = await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key });
      expect(got.body.channels[0]).toMatchObject({ status: 'published', platformPostId: sent[0] });
      // The publish activity completed in its first attempt.
      const history = await stack.env.client.workflow.getHandle(postWorkflowId(r.body.id)).fetchHistory();
      const events = history.events ?? [];
      const publish = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'publishToChannel')!;
      const started = events.filter((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(publish.eventId));
      expect(started.map((e) => e.activityTaskStartedEventAttributes!.attempt)).toEqual([1]);
    } finally {
      await refusal.remove();
    }
  });
});
