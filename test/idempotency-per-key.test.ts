// Idempotency-Key replays are per API key: another key of the same organization —
// here one limited to other channels — sending the same Idempotency-Key makes its own request and
// never receives the stored response of the first key. Also: the migration that re-keys the table
// keeps what it can attribute on a database that already has rows.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MediaItem, Post } from '../db/entities/index.ts';
import { createOrm, migrate } from '../db/orm.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;

beforeAll(async () => {
  stack = await startPostStack({ storage: 'disk' });
});
afterAll(async () => {
  await stack?.stop();
});

async function later(days = 2): Promise<string> {
  return new Date((await stack.syncClock()).getTime() + days * 86_400_000).toISOString();
}

describe('Idempotency-Key per API key', () => {
  test("another key sending key A's Idempotency-Key (even with A's exact body) never gets A's post back", async () => {
    const org = await makeOrg('TEAM');
    const chA = await makeChannel(org.id, 'MASTODON', { name: 'A' });
    const chB = await makeChannel(org.id, 'MASTODON', { name: 'B' });
    const a = await makeKey(org.id, { channels: [chA.id], name: 'key A' });
    const b = await makeKey(org.id, { channels: [chB.id], name: 'key B' });
    const bodyA = { content: `secret plan ${crypto.randomUUID()}`, channelIds: [chA.id], publishAt: await later() };
    const first = await call(stack.app, 'POST', '/v1/posts', { key: a.key, body: bodyA, headers: { 'idempotency-key': 'shared-1' } });
    expect(first.status).toBe(201);

    // C (also limited to B's channel) replays A's request byte for byte: C's own request, refused
    // for the channel outside its list — A's post is not revealed.
    const c = await makeKey(org.id, { channels: [chB.id], name: 'key C' });
    const replay = await call(stack.app, 'POST', '/v1/posts', { key: c.key, body: bodyA, headers: { 'idempotency-key': 'shared-1' } });
    expect(replay.status).toBe(403);
    expect(replay.body.error.code).toBe('forbidden_scope');
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(replay.body)).not.toContain(first.body.id);
    expect(JSON.stringify(replay.body)).not.toContain(bodyA.content);

    // B with its own body and the same Idempotency-Key: an independent new post (not A's, not a 409).
    const bodyB = { content: `b's own ${crypto.randomUUID()}`, channelIds: [chB.id], publishAt: await later() };
    const own = await call(stack.app, 'POST', '/v1/posts', { key: b.key, body: bodyB, headers: { 'idempotency-key': 'shared-1' } });
    expect(own.status).toBe(201);
    expect(own.body.id).not.toBe(first.body.id);
    expect(own.body.content).toBe(bodyB.content);
    expect(own.headers.get('idempotent-replayed')).toBeNull();

    // B doing the same meets its own stored request (another body): 409, still nothing of A's.
    const replayB = await call(stack.app, 'POST', '/v1/posts', { key: b.key, body: bodyA, headers: { 'idempotency-key': 'shared-1' } });
    expect(replayB.status).toBe(409);
    expect(JSON.stringify(replayB.body)).not.toContain(first.body.id);

    // Each key still replays its own responses.
    const againA = await call(stack.app, 'POST', '/v1/posts', { key: a.key, body: bodyA, headers: { 'idempotency-key': 'shared-1' } });
    expect(againA.status).toBe(201);
    expect(againA.body.id).toBe(first.body.id);
    expect(againA.headers.get('idempotent-replayed')).toBe('true');
    const againB = await call(stack.app, 'POST', '/v1/posts', { key: b.key, body: bodyB, headers: { 'idempotency-key': 'shared-1' } });
    expect(againB.body.id).toBe(own.body.id);
    expect(againB.headers.get('idempotent-replayed')).toBe('true');
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id })).toBe(2);
  });

  test('two all-channel keys of one organization with the same Idempotency-Key and body: two uploads, neither a replay', async () => {
    const org = await makeOrg('TEAM');
    const a = await makeKey(org.id, { name: 'key A' });
    const b = await makeKey(org.id, { name: 'key B' });
    const body = { fileName: 'a.png', mimeType: 'image/png', fileSize: 1234 };
    const ra = await call(stack.app, 'POST', '/v1/media/uploads', { key: a.key, body, headers: { 'idempotency-key': 'up-shared' } });
    const rb = await call(stack.app, 'POST', '/v1/media/uploads', { key: b.key, body, headers: { 'idempotency-key': 'up-shared' } });
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(rb.body.media.id).not.toBe(ra.body.media.id);
    expect(rb.body.upload.url).not.toBe(ra.body.upload.url);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect(await stack.h.orm.em.fork().count(MediaItem, { organization: org.id })).toBe(2);
  });
});

describe('migration Migration20261123100000_idempotency_per_key', () => {
  test('on a database with rows: attributes them to their key where known, forgets the rest, then keys per API key', async () => {
    const name = `idem_migration_${crypto.randomUUID().slice(0, 8)}`;
    await stack.h.pg.createDatabase(name);
    const orm = await createOrm(stack.h.pg.url(name), 2);
    try {
      await orm.migrator.up({ to: 'Migration20261121070000_web' });
      const conn = orm.em.fork().getConnection();
      const now = new Date();
      const hash = 'h'.repeat(64);
      await conn.execute(
        `insert into organizations (id, name, plan, created_at, updated_at) values
        ('org_two', 'two keys', 'TEAM', ?, ?), ('org_one', 'one key', 'TEAM', ?, ?)`,
        [now, now, now, now],
      );
      await conn.execute(
        `insert into api_keys (id, organization_id, name, hash, prefix, scopes, created_at) values
        ('key_a', 'org_two', 'a', 'ha', 'sk_live_a', '{publish}', ?),
        ('key_b', 'org_two', 'b', 'hb', 'sk_live_b', '{publish}', ?),
        ('key_solo', 'org_one', 's', 'hs', 'sk_live_s', '{publish}', ?)`,
        [now, now, now],
      );
      await conn.execute(
        `insert into posts (id, organization_id, status, content, source, api_key_id, scheduled_at, created_at, updated_at) values
        ('post_by_b', 'org_two', 'scheduled', 'x', 'api', 'key_b', ?, ?, ?)`,
        [now, now, now],
      );
      const row = (org: string, endpoint: string, key: string, status: number | null, response: unknown) =>
        conn.execute(
          `insert into idempotency_keys (organization_id, endpoint, key, request_hash, status_code, response, created_at) values (?, ?, ?, ?, ?, ?, ?)`,
          [org, endpoint, key, hash, status, response === null ? null : JSON.stringify(response), now],
        );
      await row('org_two', 'POST /v1/posts', 'k-post', 201, { id: 'post_by_b' }); // the post names its key
      await row('org_two', 'POST /v1/posts', 'k-refused', 422, { error: { code: 'validation_failed' } }); // which key? unknown
      await row('org_two', 'POST /v1/media/uploads', 'k-media', 201, { media: { id: 'med_x' } }); // unknown
      await row('org_one', 'POST /v1/media/uploads', 'k-solo', 201, { media: { id: 'med_y' } }); // the only key

      expect(await migrate(orm)).toContain('Migration20261123100000_idempotency_per_key');
      const rows = await conn.execute<{ key: string; api_key_id: string }[]>('select key, api_key_id from idempotency_keys order by key');
      expect(rows.map((r) => [r.key, r.api_key_id])).toEqual([
        ['k-post', 'key_b'],
        ['k-solo', 'key_solo'],
      ]);
      // Per API key now: key A may use key B's Idempotency-Key for itself.
      await conn.execute(
        `insert into idempotency_keys (api_key_id, organization_id, endpoint, key, request_hash, created_at) values ('key_a', 'org_two', 'POST /v1/posts', 'k-post', ?, ?)`,
        [hash, now],
      );
      await expect(
        conn.execute(
          `insert into idempotency_keys (api_key_id, organization_id, endpoint, key, request_hash, created_at) values ('key_b', 'org_two', 'POST /v1/posts', 'k-post', ?, ?)`,
          [hash, now],
        ),
      ).rejects.toThrow(/duplicate key/);
      // Deleting a key deletes its stored responses.
      await conn.execute(`delete from api_keys where id = 'key_a'`);
      expect(await conn.execute(`select 1 from idempotency_keys where api_key_id = 'key_a'`)).toHaveLength(0);
    } finally {
      await orm.close(true);
    }
  });
});
