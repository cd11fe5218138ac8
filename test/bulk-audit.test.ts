// The audit of a batch (POST /v1/posts/bulk, POST /v1/posts/import, the web app's import page) in
// mode `each`: a batch that created a post is one post.bulk_create event naming it; one whose every
// row was refused answers 200 but changed nothing, so it is no event (refusals are not events).
import { describe, expect, test } from 'bun:test';
import { AuditEvent } from '../db/entities/index.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call } from './harness/fixtures.ts';
import { mastodonAccount, type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';
import { query, signedInUserWithChannel } from './harness/web-browser.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({}, (s, f) => {
  stack = s;
  fake = f;
});

const DAY = 86_400_000;
const TOO_LONG = 'x'.repeat(501);

const account = () => mastodonAccount(stack, fake, { name: 'Team News' });

const bulkEvents = (organizationId: string) =>
  stack.h.orm.em.fork().find(AuditEvent, { organization: organizationId, action: 'post.bulk_create' });

const publishAt = async (days = 1) => new Date((await stack.syncClock()).getTime() + days * DAY).toISOString();

describe('the audit of a batch in mode each', () => {
  test('POST /v1/posts/bulk: every row refused records no event; a row created records one naming that post', async () => {
    const { orgId, key, channelId } = await account();
    const at = await publishAt();
    const bad = { content: TOO_LONG, channelIds: [channelId], publishAt: at };
    const none = await call(stack.app, 'POST', '/v1/posts/bulk', {
      key,
      body: { mode: 'each', posts: [bad, { ...bad, channelIds: ['ch_unknown'] }] },
    });
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ mode: 'each', created: 0, failed: 2 });
    expect(await bulkEvents(orgId)).toEqual([]);

    const good = { content: `good ${crypto.randomUUID()}`, channelIds: [channelId], publishAt: at };
    const some = await call(stack.app, 'POST', '/v1/posts/bulk', { key, body: { mode: 'each', posts: [bad, good] } });
    expect(some.status).toBe(200);
    expect(some.body).toMatchObject({ created: 1, failed: 1 });
    const id = some.body.results[1].post.id as string;
    const events = await bulkEvents(orgId);
    expect(events.map((e) => e.details)).toEqual([
      expect.objectContaining({ operationId: 'createPostsInBulk', mode: 'each', postIds: [id] }),
    ]);
  });

  test('POST /v1/posts/import: every row refused records no event; a row created records one naming that post', async () => {
    const { orgId, key } = await account();
    const at = await publishAt();
    const importCsv = (csv: string) =>
      call(stack.app, 'POST', '/v1/posts/import?mode=each', { key, rawBody: csv, headers: { 'content-type': 'text/csv' } });
    const none = await importCsv(`content,channels,publishAt\n${TOO_LONG},Team News,${at}\n`);
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ created: 0, failed: 1 });
    expect(await bulkEvents(orgId)).toEqual([]);

    const some = await importCsv(`content,channels,publishAt\n${TOO_LONG},Team News,${at}\ngood ${crypto.randomUUID()},Team News,${at}\n`);
    expect(some.status).toBe(200);
    expect(some.body).toMatchObject({ created: 1, failed: 1 });
    const id = some.body.results[1].post.id as string;
    const events = await bulkEvents(orgId);
    expect(events.map((e) => e.details)).toEqual([expect.objectContaining({ operationId: 'importPosts', mode: 'each', postIds: [id] })]);

    // Drafts, when asked: a batch that made only drafts is one event naming them.
    const drafts = await call(stack.app, 'POST', '/v1/posts/import?mode=each&drafts=true', {
      key,
      rawBody: `content,channels\nan idea ${crypto.randomUUID()},\n`,
      headers: { 'content-type': 'text/csv' },
    });
    expect(drafts.body).toMatchObject({ created: 1, drafts: 1, failed: 0 });
    expect((await bulkEvents(orgId)).map((e) => e.details).filter((d) => (d.postIds as string[]).length === 0)).toEqual([
      expect.objectContaining({ operationId: 'importPosts', postIds: [], draftIds: [drafts.body.results[0].draft.id] }),
    ]);
  });

  test('the web import page: every row refused records no event; a row created records one naming that post', async () => {
    const { browser, org } = await signedInUserWithChannel(stack.app, fake.url);
    const at = await publishAt();
    /** The preview of `csv`, then its table submitted as it stands, in mode each. */
    const importFile = async (csv: string) => {
      const form = new FormData();
      form.set('_csrf', browser.csrfToken);
      form.set('file', new File([csv], 'posts.csv', { type: 'text/csv' }));
      form.set('csv', '');
      form.set('timeZone', 'UTC');
      const preview = await stack.app.handle(
        new Request('http://localhost/posts/import/preview', {
          method: 'POST',
          headers: { cookie: browser.cookieHeader(), accept: 'text/html', origin: 'http://localhost' },
          body: form,
        }),
      );
      expect(preview.status).toBe(200);
      const html = await preview.text();
      const table = new URLSearchParams();
      const scope = '[data-testid="import-table-form"]';
      for (const input of await query(html, `${scope} input`)) {
        const { name, value = '', type = 'text', checked } = input.attrs;
        if (!name || name === 'mode' || ((type === 'checkbox' || type === 'radio') && checked === undefined)) continue;
        table.append(name, value);
      }
      for (const area of await query(html, `${scope} textarea`)) table.append(area.attrs.name!, area.text);
      table.append('timeZone', 'UTC');
      table.append('mode', 'each');
      return browser.post('/posts/import', table);
    };
    const none = await importFile(`content,channels,publishAt\n${TOO_LONG},Team News,${at}\n`);
    expect(none.status).toBe(200);
    expect(await none.query('[data-testid="import-created"]')).toEqual([]);
    expect((await none.query('[data-testid="import-refused"]')).length).toBe(1);
    expect(await bulkEvents(org.id)).toEqual([]);

    const some = await importFile(`content,channels,publishAt\n${TOO_LONG},Team News,${at}\ngood ${crypto.randomUUID()},Team News,${at}\n`);
    expect(some.status).toBe(200);
    const created = await some.query('[data-testid="import-created"]');
    expect(created.length).toBe(1);
    const id = created[0]!.attrs['data-post-id']!;
    const events = await bulkEvents(org.id);
    expect(events.map((e) => e.details)).toEqual([expect.objectContaining({ mode: 'each', postIds: [id] })]);
  });
});
