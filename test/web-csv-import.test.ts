// The web app's CSV import page, end to end: a file uploaded (multipart, or pasted) → a table of
// its rows, each checked as POST /v1/posts/validate checks a post → rows fixed or dropped in the
// table → the rows kept created as one batch (source app, the member as requester) → the posts in
// Postgres with their workflows on the time-skipping Temporal server; refused rows never created.
import { describe, expect, test } from 'bun:test';
import { AuditEvent, Draft, Post } from '../db/entities/index.ts';
import { zonedParts, zonedToUtc } from '../lib/zoned-time.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';
import { query, signedInUserWithChannel, type Browser } from './harness/web-browser.ts';
import type { Role } from '../db/entities/index.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({}, (s, f) => {
  stack = s;
  fake = f;
});

const ZONE = 'Europe/Berlin';
const DAY = 86_400_000;

/** A member (of `role`) of a new organization with a Mastodon channel named "Team News". */
const member = (role: Role = 'owner') => signedInUserWithChannel(stack.app, fake.url, { role });

/** `days` ahead of the app's clock at 09:30 in ZONE: the cell as typed, and the instant it means. */
async function wallTime(days: number, minute = 30) {
  const day = zonedParts(new Date((await stack.syncClock()).getTime() + days * DAY), ZONE);
  const wall = { ...day, hour: 9, minute, second: 0 };
  const two = (n: number) => String(n).padStart(2, '0');
  return { cell: `${wall.year}-${two(wall.month)}-${two(wall.day)} 09:${two(minute)}`, at: zonedToUtc(wall, ZONE).toISOString() };
}

/** The upload form as a browser sends it: multipart, the file in `file`. */
async function upload(b: Browser, csv: string, o: { csrf?: boolean } = {}) {
  const form = new FormData();
  if (o.csrf !== false) form.set('_csrf', b.csrfToken);
  form.set('file', new File([csv], 'posts.csv', { type: 'text/csv' }));
  form.set('csv', '');
  form.set('timeZone', ZONE);
  const res = await stack.app.handle(
    new Request('http://localhost/posts/import/preview', {
      method: 'POST',
      headers: { cookie: b.cookieHeader(), accept: 'text/html', origin: 'http://localhost' },
      body: form,
    }),
  );
  const html = await res.text();
  return { status: res.status, html };
}

/** What the preview's table form submits as it stands: its fields, the checked boxes and radios, the chosen zone. */
async function tableForm(html: string): Promise<URLSearchParams> {
  const form = new URLSearchParams();
  const scope = '[data-testid="import-table-form"]';
  for (const input of await query(html, `${scope} input`)) {
    const { name, value = '', type = 'text', checked } = input.attrs;
    if (!name || ((type === 'checkbox' || type === 'radio') && checked === undefined)) continue;
    form.append(name, value);
  }
  for (const area of await query(html, `${scope} textarea`)) form.append(area.attrs.name!, area.text);
  for (const option of await query(html, `${scope} select[name="timeZone"] option[selected]`)) form.append('timeZone', option.attrs.value!);
  return form;
}

/** Each row of the table: its number, outcome, result text and error lines. */
async function rowsOf(html: string) {
  const rows = await query(html, '[data-testid="import-row"]');
  const results = await query(html, '[data-testid="import-result"]');
  return rows.map((r, i) => ({ row: Number(r.attrs['data-row']), outcome: r.attrs['data-outcome'], result: results[i]!.text }));
}

const postsOf = (organizationId: string) => stack.h.orm.em.fork().find(Post, { organization: organizationId });

describe('the CSV import page', () => {
  test('upload → each row checked (a good one, a refused one, one the reader refuses) → drop the bad ones → only the good post is created', async () => {
    const { browser, org, user } = await member();
    const when = await wallTime(2);
    const good = `Good row ${crypto.randomUUID()}`;
    const tooLong = 'x'.repeat(501);
    const csv = `content,channels,publishAt\n"${good}",Team News,${when.cell}\n${tooLong},Team News,${when.cell}\nNobody's,Nobody,${when.cell}\n`;
    const preview = await upload(browser, csv);
    expect(preview.status).toBe(200);
    const rows = await rowsOf(preview.html);
    expect(rows.map((r) => [r.row, r.outcome])).toEqual([
      [0, 'ready'],
      [1, 'refused'],
      [2, 'refused'],
    ]);
    // The good row: OK, at the wall time read in the chosen zone.
    expect(rows[0]!.result).toStartWith('OK');
    expect(preview.html).toContain(`datetime="${when.at}"`);
    // The refusals at their fields: validatePost's (the text's length) and the reader's (the channel).
    expect(rows[1]!.result).toMatch(/^content: is 501 characters .*allows 500$/);
    expect(rows[2]!.result).toBe('channels: unknown channel "Nobody"');

    const form = await tableForm(preview.html);
    expect(form.getAll('column')).toEqual(['content', 'channels', 'publishAt']);
    expect(form.get('mode')).toBe('all_or_nothing');
    form.append('drop', '1');
    form.append('drop', '2');
    const created = await browser.post('/posts/import', form);
    expect(created.status).toBe(200);
    const items = await created.query('[data-testid="import-created"]');
    expect(items.map((i) => i.attrs['data-row'])).toEqual(['0']);
    const id = items[0]!.attrs['data-post-id']!;
    expect((await created.one('[data-testid="import-created-link"]')).attrs.href).toBe(`/posts/${id}`);
    expect(await created.query('[data-testid="import-refused"]')).toEqual([]);

    const posts = await postsOf(org.id);
    expect(posts.map((p) => ({ id: p.id, content: p.content, source: p.source, apiKeyId: p.apiKeyId, approval: p.approval }))).toEqual([
      { id, content: good, source: 'app', apiKeyId: null, approval: null },
    ]);
    expect(posts[0]!.scheduledAt.toISOString()).toBe(when.at);
    // The post's page is there; the batch is one audit event naming its post.
    expect((await browser.get(`/posts/${id}`)).status).toBe(200);
    const events = await stack.h.orm.em.fork().find(AuditEvent, { organization: org.id, action: 'post.bulk_create' });
    expect(events.map((e) => ({ actor: e.actorId, details: e.details }))).toEqual([
      { actor: user.id, details: { mode: 'all_or_nothing', postIds: [id], role: 'owner' } },
    ]);
  });

  test('a row fixed in the table (its text and its time), checked again, then created as fixed', async () => {
    const { browser, org } = await member();
    const first = await wallTime(3);
    const later = await wallTime(4, 45);
    const preview = await upload(browser, `content,channels,publishAt\n${'y'.repeat(600)},Team News,${first.cell}\n`);
    expect((await rowsOf(preview.html)).map((r) => r.outcome)).toEqual(['refused']);

    const fixedText = `Fixed ${crypto.randomUUID()}`;
    const form = await tableForm(preview.html);
    expect(form.get('cell.0.0')).toBe('y'.repeat(600));
    form.set('cell.0.0', fixedText);
    form.set('cell.0.2', later.cell);
    const checked = await browser.post('/posts/import/preview', form);
    expect(checked.status).toBe(200);
    expect((await rowsOf(checked.html)).map((r) => r.outcome)).toEqual(['ready']);
    expect(checked.html).toContain(`datetime="${later.at}"`);
    expect(await postsOf(org.id)).toEqual([]); // checking creates nothing

    const created = await browser.post('/posts/import', await tableForm(checked.html));
    expect(created.status).toBe(200);
    const posts = await postsOf(org.id);
    expect(posts.map((p) => [p.content, p.scheduledAt.toISOString(), p.source])).toEqual([[fixedText, later.at, 'app']]);
    expect((await created.one('[data-testid="import-created"]')).attrs['data-post-id']).toBe(posts[0]!.id);
  });

  test('all or nothing creates nothing while a row is refused (the table comes back); each creates the others', async () => {
    const { browser, org } = await member();
    const when = await wallTime(2);
    const good = `Kept ${crypto.randomUUID()}`;
    const preview = await upload(browser, `content,channels,publishAt\n${good},Team News,${when.cell}\nbad time,Team News,tomorrow\n`);
    const rows = await rowsOf(preview.html);
    expect(rows.map((r) => r.outcome)).toEqual(['ready', 'refused']);
    expect(rows[1]!.result).toStartWith('publishAt:');

    const form = await tableForm(preview.html);
    const none = await browser.post('/posts/import', form);
    expect(none.status).toBe(422);
    expect((await none.one('[data-testid="form-errors"]')).text).toContain('No post was created: 1 row was refused.');
    expect((await rowsOf(none.html)).map((r) => r.outcome)).toEqual(['held', 'refused']);
    expect(await postsOf(org.id)).toEqual([]);

    form.set('mode', 'each');
    const some = await browser.post('/posts/import', form);
    expect(some.status).toBe(200);
    expect((await some.one('[data-testid="import-result-summary"]')).text).toBe('1 post created, 1 row refused.');
    const refused = await some.one('[data-testid="import-refused"]');
    expect(refused.attrs['data-row']).toBe('1');
    expect(refused.text).toContain('publishAt:');
    expect((await postsOf(org.id)).map((p) => p.content)).toEqual([good]);
  });

  test('asked for drafts, rows without a time become drafts: checked as drafts, kept, never posts', async () => {
    const { browser, org } = await member();
    const when = await wallTime(2);
    const idea = `Idea ${crypto.randomUUID()}`;
    const form = new URLSearchParams({
      csv: `content,channels,publishAt\n${idea},,\nA post,Team News,${when.cell}\n`,
      timeZone: ZONE,
      drafts: 'true',
    });
    const preview = await browser.post('/posts/import/preview', form);
    expect((await rowsOf(preview.html)).map((r) => r.outcome)).toEqual(['draft-ready', 'ready']);
    const table = await tableForm(preview.html);
    expect(table.get('drafts')).toBe('true');
    const created = await browser.post('/posts/import', table);
    expect(created.status).toBe(200);
    expect((await created.one('[data-testid="import-result-summary"]')).text).toBe('1 post created, 1 draft kept, 0 rows refused.');
    const draftId = (await created.one('[data-testid="import-drafted"]')).attrs['data-draft-id'];
    const drafts = await stack.h.orm.em.fork().find(Draft, { organization: org.id });
    expect(drafts.map((d) => [d.id, d.content.content, d.channelIds])).toEqual([[draftId, idea, []]]);
    expect((await postsOf(org.id)).map((p) => p.content)).toEqual(['A post']);
    // Not asked: the same row is a post published now, which needs a channel.
    table.delete('drafts');
    const [asPost] = await rowsOf((await browser.post('/posts/import/preview', table)).html);
    expect(asPost).toMatchObject({ outcome: 'refused', result: expect.stringContaining('channels') });
  });

  test('a contributor imports by pasting the text; the posts wait for approval', async () => {
    const { browser, org } = await member('contributor');
    const when = await wallTime(2);
    const text = `From a contributor ${crypto.randomUUID()}`;
    const preview = await browser.post('/posts/import/preview', {
      csv: `content,channels,publishAt\n${text},Team News,${when.cell}\n`,
      timeZone: ZONE,
    });
    expect(preview.status).toBe(200);
    expect((await rowsOf(preview.html)).map((r) => r.outcome)).toEqual(['ready']);
    const created = await browser.post('/posts/import', await tableForm(preview.html));
    expect(created.status).toBe(200);
    expect(await created.query('[data-testid="import-awaits-approval"]')).toHaveLength(1);
    const [post] = await postsOf(org.id);
    expect(post?.content).toBe(text);
    expect(post?.approval?.status).toBe('pending');
  });

  test('a media URL is refused on the page with its reason (ids only); a file without a publishAt column gets one to fill', async () => {
    const { browser, org } = await member();
    const preview = await upload(browser, 'content,channels,media\nWith a picture,Team News,https://example.com/a.png\n');
    expect(preview.status).toBe(200);
    const [row] = await rowsOf(preview.html);
    expect(row!.outcome).toBe('refused');
    expect(row!.result).toContain('media: https://example.com/a.png: URLs are not fetched here');
    const form = await tableForm(preview.html);
    expect(form.getAll('column')).toEqual(['publishAt', 'content', 'channels', 'media']);
    expect(await query(preview.html, '[data-testid="import-publish-at"]')).toHaveLength(1);
    expect((await browser.post('/posts/import', form)).status).toBe(422);
    expect(await postsOf(org.id)).toEqual([]);
  });

  test('a file the reader refuses goes back to the upload form with its reason', async () => {
    const { browser } = await member();
    const res = await upload(browser, 'text,where\nhello,Team News\n');
    expect(res.status).toBe(422);
    expect(res.html).toContain('header: unknown column');
    expect(await query(res.html, '[data-testid="import-upload-form"]')).toHaveLength(1);
  });

  test('a viewer cannot reach the page nor check a file; an upload without the CSRF token is refused', async () => {
    const { browser } = await member('viewer');
    expect((await browser.get('/posts/import')).status).toBe(403);
    const sent = await browser.post('/posts/import/preview', { csv: 'content,channels\nhi,Team News\n' });
    expect(sent.status).toBe(403);
    expect(sent.html).toContain('(posts.write)');
    expect(await (await browser.get('/calendar')).query('[data-testid="nav-import"]')).toEqual([]);

    const owner = await member();
    expect(await (await owner.browser.get('/calendar')).query('[data-testid="nav-import"]')).toHaveLength(1);
    const forged = await upload(owner.browser, 'content,channels\nhi,Team News\n', { csrf: false });
    expect(forged.status).toBe(403);
    expect(await postsOf(owner.org.id)).toEqual([]);
  });
});
