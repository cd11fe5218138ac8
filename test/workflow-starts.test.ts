// A row and its workflow (domain/workflow-starts.ts, docs/decisions.md "A row and its workflow"):
// a post, a post's retry and a series are committed first, their workflow started after, outside
// the organization's lock. Proven here, for each: a start lost after the commit is made good by
// the start reconciler, once; a start that fails is answered 503 with the change taken back. An
// Idempotency-Key claimed in the post's own transaction: a create cut off after its commit keeps
// its 201, one cut off before its commit leaves its key free at once. The plan limit and
// duplicate_post stay exact under concurrency; the reconciler's Temporal Schedule is wired
// (against a real `temporal server start-dev`: the time-skipping server has no Schedules).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client, Connection, type WorkflowStartInput } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { MediaItem, Post, PostChannel, Series } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { createLogger } from '../lib/log.ts';
import { postWorkflowStart } from '../domain/posts/workflow-start.ts';
import { createApp } from '../server/app.ts';
import { createWorker } from '../worker/index.ts';
import { ensureSchedules, SERVICE_SCHEDULES } from '../worker/schedules.ts';
import { POST_WORKFLOW_TYPE, postWorkflowId } from '../workflows/post-types.ts';
import { SERIES_WORKFLOW_TYPE, seriesWorkflowId } from '../workflows/series-types.ts';
import { MEDIA_UPLOAD_WORKFLOW_TYPE, uploadWorkflowId } from '../workflows/media-types.ts';
import {
  POST_RECONCILER_EVERY,
  POST_RECONCILER_INPUT,
  POST_RECONCILER_SCHEDULE_ID,
  POST_RECONCILER_WORKFLOW_TYPE,
  type PostReconcilerInput,
  type PostReconcilerResult,
} from '../workflows/post-reconciler-types.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { startKillableTemporal, type KillableTemporal } from './harness/processes.ts';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '..');

let stack: Awaited<ReturnType<typeof startPostStack>>;
/** Workflows this file starts with its own clients (stack.stop() ends only the stack client's). */
const ours: string[] = [];

beforeAll(async () => {
  stack = await startPostStack({ storage: 'disk' });
});
afterAll(async () => {
  await Promise.all(
    ours.map((id) =>
      stack.client.workflow
        .getHandle(id)
        .terminate('test finished')
        .catch(() => {}),
    ),
  );
  await stack?.stop();
});

const later = async (days = 5) => new Date((await stack.env.currentTimeMs()) + days * 86_400_000).toISOString();

async function pendingOf(postId: string): Promise<boolean | undefined> {
  const [row] = await stack.h.orm.em
    .fork()
    .getConnection()
    .execute<{ workflow_pending: boolean }[]>('select workflow_pending from posts where id = ?', [postId]);
  return row?.workflow_pending;
}

async function workflowStatus(postId: string): Promise<string> {
  try {
    return (await stack.client.workflow.getHandle(postWorkflowId(postId)).describe()).status.name;
  } catch {
    return 'NONE';
  }
}

/** A PRO organization with one Mastodon channel and a key, the stack's clock synced. */
async function account() {
  const org = await makeOrg('PRO');
  const ch = await makeChannel(org.id, 'MASTODON');
  const { key } = await makeKey(org.id);
  await stack.syncClock();
  return { org, ch, key };
}

/** Runs the reconciler's workflow once on the stack's worker (what the Schedule does every 15 s). */
function reconcile(input: Partial<PostReconcilerInput> = {}): Promise<PostReconcilerResult> {
  return stack.client.workflow.execute(POST_RECONCILER_WORKFLOW_TYPE, {
    taskQueue: stack.taskQueue,
    workflowId: `reconcile-${crypto.randomUUID()}`,
    args: [{ olderThanMs: 0, limit: 1000, ...input }],
  });
}

type StartGate = (input: WorkflowStartInput, next: (input: WorkflowStartInput) => Promise<string>) => Promise<string>;

/** The app, with a Temporal client whose starts of these workflow types go through `gate` (a start lost, late, or failing). */
function appWithStart(gate: StartGate, requestTimeoutMs = 30_000, types: string[] = [POST_WORKFLOW_TYPE]) {
  const client = new Client({
    connection: stack.env.connection,
    namespace: stack.env.namespace ?? 'default',
    interceptors: {
      workflow: [
        {
          start: (input, next) => {
            ours.push(input.options.workflowId);
            return types.includes(input.workflowType) ? gate(input, next) : next(input);
          },
        },
      ],
    },
  });
  return createApp({
    orm: stack.h.orm,
    log: () => {},
    temporal: { client, taskQueue: stack.taskQueue, requestTimeoutMs },
    rateLimiter: stack.h.rateLimiter,
    storage: stack.storage,
  });
}

/** Waits (real time) until the post with this text is committed; returns its id. */
async function committed(content: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const row = await stack.h.orm.em.fork().findOne(Post, { content });
    if (row) return row.id;
    await Bun.sleep(25);
  }
  throw new Error(`no post "${content}" was committed`);
}

describe('a workflow start lost after the commit', () => {
  test('the reconciler starts the committed post; the request, once its start fails or meets that workflow, answers 201', async () => {
    const { ch, key } = await account();
    // Each start waits for the test, then fails (its answer lost) or goes on (and meets the reconciler's workflow).
    const releases = new Map<string, (kind: string) => void>();
    const app = appWithStart(async (input, next) => {
      const postId = (input.options.args[0] as { postId: string }).postId;
      const kind = await new Promise<string>((r) => releases.set(postId, r));
      if (kind === 'lost') throw new Error('connection reset: the answer never came');
      return next(input);
    });

    for (const kind of ['lost', 'late']) {
      const content = `${kind} ${crypto.randomUUID()}`;
      const request = call(app, 'POST', '/v1/posts', { key, body: { content, channelIds: [ch.id], publishAt: await later() } });
      const postId = await Promise.race([
        committed(content),
        request.then((r) => Promise.reject(new Error(`answered first: ${r.status} ${JSON.stringify(r.body)}`))),
      ]);
      // Committed, no workflow yet: what a process that died here leaves behind.
      expect(await pendingOf(postId)).toBe(true);
      expect(await workflowStatus(postId)).toBe('NONE');
      // A run that only takes posts older than 10 s leaves it to the API.
      expect((await reconcile({ olderThanMs: 600_000 })).started).toBe(0);
      expect(await pendingOf(postId)).toBe(true);

      const result = await reconcile();
      expect(result.started).toBeGreaterThanOrEqual(1);
      expect(await pendingOf(postId)).toBe(false);
      expect(await workflowStatus(postId)).toBe('RUNNING');
      const runId = (await stack.client.workflow.getHandle(postWorkflowId(postId)).describe()).runId;

      releases.get(postId)!(kind);
      const answer = await request;
      expect({ kind, status: answer.status, id: answer.body?.id }).toEqual({ kind, status: 201, id: postId });
      // One post, one run: the API neither withdrew it nor started a second workflow.
      expect(await stack.h.orm.em.fork().count(Post, { content })).toBe(1);
      expect((await stack.client.workflow.getHandle(postWorkflowId(postId)).describe()).runId).toBe(runId);
      // Nothing left for a later run.
      expect(await pendingOf(postId)).toBe(false);
    }
  });

  test('DELETE while the start is on its way: 409 conflict, not a post marked deleted that its workflow would then publish', async () => {
    const { ch, key } = await account();
    let release!: () => void;
    const app = appWithStart(async (input, next) => {
      await new Promise<void>((r) => (release = r));
      return next(input);
    });
    const content = `delete early ${crypto.randomUUID()}`;
    const request = call(app, 'POST', '/v1/posts', { key, body: { content, channelIds: [ch.id], publishAt: await later() } });
    const postId = await committed(content);
    const early = await call(stack.app, 'DELETE', `/v1/posts/${postId}`, { key });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('conflict');
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id: postId })).deletedAt).toBeNull();
    release();
    expect((await request).status).toBe(201);
    // Once started, the cancel goes through the workflow as for any scheduled post.
    expect((await call(stack.app, 'DELETE', `/v1/posts/${postId}`, { key })).status).toBe(204);
  });

  test('a start that fails right after the commit: 503, the post withdrawn, no workflow left', async () => {
    const { org, ch, key } = await account();
    // Never answers: the request's Temporal deadline (here 300 ms) ends it as an outage.
    const app = appWithStart(() => new Promise<string>(() => {}), 300);
    const content = `outage ${crypto.randomUUID()}`;
    const r = await call(app, 'POST', '/v1/posts', { key, body: { content, channelIds: [ch.id], publishAt: await later() } });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('internal_error');
    expect(r.body.error.message).toContain('not created');
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id })).toBe(0);
    // Nothing for the reconciler to start later either.
    await reconcile();
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id })).toBe(0);
  });
});

describe('the reconciler', () => {
  /** A committed post row as the API writes it, still marked pending, committed a minute ago. */
  async function pendingRow(organizationId: string, channelId: string, opts: { deleted?: boolean } = {}): Promise<string> {
    const id = newId('post');
    const conn = stack.h.orm.em.fork().getConnection();
    const at = new Date(Date.parse(await later()));
    await conn.execute(
      `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, workflow_id,
         workflow_pending, deleted_at, created_at, updated_at)
       values (?, ?, 'scheduled', ?, '{}', '[]', 'api', ?, ?, true, ?, now() - interval '1 minute', now())`,
      [id, organizationId, `pending ${id}`, at, postWorkflowId(id), opts.deleted ? new Date() : null],
    );
    await conn.execute(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, created_at, updated_at)
       values (?, ?, ?, 'MASTODON', 'draft', ?, now(), now())`,
      [newId('pc'), id, channelId, `pending ${id}`],
    );
    return id;
  }

  test('starts a lost one, only records one already started, clears a deleted one; a second run changes nothing', async () => {
    const org = await makeOrg('PRO');
    const ch = await makeChannel(org.id, 'MASTODON');
    const lost = await pendingRow(org.id, ch.id);
    const recordLost = await pendingRow(org.id, ch.id);
    const deleted = await pendingRow(org.id, ch.id, { deleted: true });
    // The API's start reached Temporal; only its record was lost.
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id: recordLost });
    const start = postWorkflowStart({ postId: recordLost, organizationId: org.id, publishAt: row.scheduledAt.toISOString() });
    await stack.client.workflow.start(POST_WORKFLOW_TYPE, { ...start.options, taskQueue: stack.taskQueue });
    const firstRun = (await stack.client.workflow.getHandle(postWorkflowId(recordLost)).describe()).runId;

    const result = await reconcile();
    expect(result.started).toBeGreaterThanOrEqual(1);
    expect(result.alreadyStarted).toBeGreaterThanOrEqual(1);
    expect(result.cleared).toBeGreaterThanOrEqual(1);
    for (const id of [lost, recordLost, deleted]) expect(await pendingOf(id)).toBe(false);
    expect(await workflowStatus(lost)).toBe('RUNNING');
    expect((await stack.client.workflow.getHandle(postWorkflowId(recordLost)).describe()).runId).toBe(firstRun);
    expect(await workflowStatus(deleted)).toBe('NONE');

    const again = await reconcile();
    expect(again).toEqual({ started: 0, alreadyStarted: 0, cleared: 0 });
  });
});

/** Waits (real time) until `check` holds. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await Bun.sleep(25);
  }
  throw new Error(`never happened: ${what}`);
}

async function seriesPending(seriesId: string): Promise<boolean | undefined> {
  return (await stack.h.orm.em.fork().findOne(Series, { id: seriesId }))?.workflowPending;
}

async function runStatus(workflowId: string): Promise<string> {
  try {
    return (await stack.client.workflow.getHandle(workflowId).describe()).status.name;
  } catch {
    return 'NONE';
  }
}

describe('a series: the same protocol', () => {
  test('a start lost after the commit: the reconciler starts the series once, and the request answers 201', async () => {
    const { ch, key } = await account();
    let release!: () => void;
    const app = appWithStart(
      async () => {
        await new Promise<void>((r) => (release = r));
        throw new Error('connection reset: the answer never came');
      },
      30_000,
      [SERIES_WORKFLOW_TYPE],
    );
    const content = `series lost ${crypto.randomUUID()}`;
    const request = call(app, 'POST', '/v1/series', {
      key,
      body: { content, channelIds: [ch.id], publishAt: await later(), repeat: { every: 'week' } },
    });
    let seriesId = '';
    await until(async () => {
      seriesId = (await stack.h.orm.em.fork().findOne(Series, { content }))?.id ?? '';
      return seriesId !== '';
    }, 'the series committed');
    expect(await seriesPending(seriesId)).toBe(true);
    expect(await runStatus(seriesWorkflowId(seriesId))).toBe('NONE');

    const result = await reconcile();
    expect(result.started).toBeGreaterThanOrEqual(1);
    expect(await seriesPending(seriesId)).toBe(false);
    expect(await runStatus(seriesWorkflowId(seriesId))).toBe('RUNNING');
    const runId = (await stack.client.workflow.getHandle(seriesWorkflowId(seriesId)).describe()).runId;

    release();
    const answer = await request;
    expect({ status: answer.status, id: answer.body?.id }).toEqual({ status: 201, id: seriesId });
    expect(await stack.h.orm.em.fork().count(Series, { content })).toBe(1);
    expect((await stack.client.workflow.getHandle(seriesWorkflowId(seriesId)).describe()).runId).toBe(runId);
    expect((await reconcile()).started).toBe(0);
  });

  test('a start that fails: 503, the series withdrawn, nothing for the reconciler', async () => {
    const { org, ch, key } = await account();
    const app = appWithStart(() => new Promise<string>(() => {}), 300, [SERIES_WORKFLOW_TYPE]);
    const r = await call(app, 'POST', '/v1/series', {
      key,
      body: { content: `series outage ${crypto.randomUUID()}`, channelIds: [ch.id], publishAt: await later(), repeat: { every: 'day' } },
    });
    expect(r.status).toBe(503);
    expect(r.body.error.message).toContain('not created');
    expect(await stack.h.orm.em.fork().count(Series, { organization: org.id })).toBe(0);
  });
});

describe('an upload: the same protocol', () => {
  test('a start lost after the commit: the reconciler starts its workflow once, and the request answers 201; a start that fails: 503, no media item', async () => {
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    let release!: () => void;
    const app = appWithStart(
      async () => {
        await new Promise<void>((r) => (release = r));
        throw new Error('connection reset: the answer never came');
      },
      30_000,
      [MEDIA_UPLOAD_WORKFLOW_TYPE],
    );
    const fileName = `lost-${crypto.randomUUID()}.png`;
    const request = call(app, 'POST', '/v1/media/uploads', { key, body: { fileName, mimeType: 'image/png', fileSize: 1000 } });
    let mediaId = '';
    await until(async () => {
      mediaId = (await stack.h.orm.em.fork().findOne(MediaItem, { fileName }))?.id ?? '';
      return mediaId !== '';
    }, 'the media item committed');
    expect((await stack.h.orm.em.fork().findOneOrFail(MediaItem, { id: mediaId })).workflowPending).toBe(true);
    expect(await runStatus(uploadWorkflowId(mediaId))).toBe('NONE');
    expect((await reconcile()).started).toBeGreaterThanOrEqual(1);
    expect(await runStatus(uploadWorkflowId(mediaId))).toBe('RUNNING');
    const runId = (await stack.client.workflow.getHandle(uploadWorkflowId(mediaId)).describe()).runId;
    release();
    const answer = await request;
    expect({ status: answer.status, id: answer.body?.media?.id }).toEqual({ status: 201, id: mediaId });
    expect((await stack.client.workflow.getHandle(uploadWorkflowId(mediaId)).describe()).runId).toBe(runId);
    expect((await stack.h.orm.em.fork().findOneOrFail(MediaItem, { id: mediaId })).workflowPending).toBe(false);

    const failing = appWithStart(() => new Promise<string>(() => {}), 300, [MEDIA_UPLOAD_WORKFLOW_TYPE]);
    const outage = await call(failing, 'POST', '/v1/media/uploads', {
      key,
      body: { fileName: `outage-${crypto.randomUUID()}.png`, mimeType: 'image/png', fileSize: 1000 },
    });
    expect(outage.status).toBe(503);
    expect(await stack.h.orm.em.fork().count(MediaItem, { organization: org.id })).toBe(1);
  });
});

describe('a retry of a post whose workflow has closed: the same protocol', () => {
  /** A failed post with no workflow running (its run closed), as a retry finds it. */
  async function failedPost(organizationId: string, channelId: string): Promise<string> {
    const id = newId('post');
    const conn = stack.h.orm.em.fork().getConnection();
    await conn.execute(
      `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, workflow_id,
         created_at, updated_at)
       values (?, ?, 'failed', ?, '{}', '[]', 'api', now(), ?, now(), now())`,
      [id, organizationId, `failed ${id}`, postWorkflowId(id)],
    );
    await conn.execute(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, error, created_at, updated_at)
       values (?, ?, ?, 'MASTODON', 'failed', ?, 'the instance was down', now(), now())`,
      [newId('pc'), id, channelId, `failed ${id}`],
    );
    return id;
  }

  test('a start lost after the commit: the reconciler starts the retry run once, and the request answers 202', async () => {
    const { org, ch, key } = await account();
    const postId = await failedPost(org.id, ch.id);
    let release!: () => void;
    const app = appWithStart(async () => {
      await new Promise<void>((r) => (release = r));
      throw new Error('connection reset: the answer never came');
    });
    const request = call(app, 'POST', `/v1/posts/${postId}/retry`, { key });
    await until(async () => (await pendingOf(postId)) === true, 'the retry committed');
    expect(await workflowStatus(postId)).toBe('NONE');

    const result = await reconcile();
    expect(result.started).toBeGreaterThanOrEqual(1);
    expect(await pendingOf(postId)).toBe(false);
    const runId = (await stack.client.workflow.getHandle(postWorkflowId(postId)).describe()).runId;
    release();
    const answer = await request;
    expect(answer.status).toBe(202);
    // The retry run has begun: its startRetry cleared the error the request's transaction kept.
    await until(async () => {
      const [pc] = await stack.h.orm.em.fork().find(PostChannel, { post: postId });
      return pc!.status === 'publishing' && pc!.error === null;
    }, 'the retry run began');
    // One run: the request met the reconciler's, and started no second one.
    expect((await stack.client.workflow.getHandle(postWorkflowId(postId)).describe()).runId).toBe(runId);
    expect((await reconcile()).started).toBe(0);
  });

  test('a start that fails: 503, the post and its channel failed again with their error', async () => {
    const { org, ch, key } = await account();
    const postId = await failedPost(org.id, ch.id);
    const app = appWithStart(() => new Promise<string>(() => {}), 300);
    const r = await call(app, 'POST', `/v1/posts/${postId}/retry`, { key });
    expect(r.status).toBe(503);
    expect(r.body.error.message).toContain('not started');
    const post = await stack.h.orm.em.fork().findOneOrFail(Post, { id: postId });
    expect({ status: post.status, pending: post.workflowPending }).toEqual({ status: 'failed', pending: false });
    const [pc] = await stack.h.orm.em.fork().find(PostChannel, { post: postId });
    expect({ status: pc!.status, error: pc!.error }).toEqual({ status: 'failed', error: 'the instance was down' });
    const view = await call(stack.app, 'GET', `/v1/posts/${postId}`, { key });
    expect(view.body.channels[0]).toMatchObject({ status: 'failed', error: 'the instance was down' });
  });
});

describe("an Idempotency-Key claimed in the post's own transaction", () => {
  test('a create cut off after its commit: the retry with its key gets 201 with the same post, also across a Postgres connection loss', async () => {
    const { ch, key } = await account();
    // The first request commits, then never answers (its process as good as dead).
    const app = appWithStart(() => new Promise<string>(() => {}), 600_000);
    const body = { content: `cut off ${crypto.randomUUID()}`, channelIds: [ch.id], publishAt: await later() };
    const idempotencyKey = `cut-${crypto.randomUUID()}`;
    void call(app, 'POST', '/v1/posts', { key, body, headers: { 'idempotency-key': idempotencyKey } });
    const postId = await committed(body.content);
    // Every Postgres connection the service holds is cut, as a database restart does.
    await stack.h.orm.em
      .fork()
      .getConnection()
      .execute('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')
      .catch(() => {});
    // What the reconciler does for a post whose request died.
    await reconcile();
    const retry = await call(stack.app, 'POST', '/v1/posts', { key, body, headers: { 'idempotency-key': idempotencyKey } });
    expect({ status: retry.status, id: retry.body?.id, replayed: retry.headers.get('idempotent-replayed') }).toEqual({
      status: 201,
      id: postId,
      replayed: 'true',
    });
    expect(retry.headers.get('location')).toBe(`/v1/posts/${postId}`);
    expect(await stack.h.orm.em.fork().count(Post, { content: body.content })).toBe(1);
    // The answer is stored now: a third request gets the same.
    const third = await call(stack.app, 'POST', '/v1/posts', { key, body, headers: { 'idempotency-key': idempotencyKey } });
    expect({ status: third.status, id: third.body?.id }).toEqual({ status: 201, id: postId });
  });

  test('a series create cut off after its commit: the retry with its key gets 201 with the same series', async () => {
    const { ch, key } = await account();
    const app = appWithStart(() => new Promise<string>(() => {}), 600_000, [SERIES_WORKFLOW_TYPE]);
    const body = {
      content: `series cut off ${crypto.randomUUID()}`,
      channelIds: [ch.id],
      publishAt: await later(),
      repeat: { every: 'day' },
    };
    const idempotencyKey = `series-cut-${crypto.randomUUID()}`;
    void call(app, 'POST', '/v1/series', { key, body, headers: { 'idempotency-key': idempotencyKey } });
    let seriesId = '';
    await until(async () => {
      seriesId = (await stack.h.orm.em.fork().findOne(Series, { content: body.content }))?.id ?? '';
      return seriesId !== '';
    }, 'the series committed');
    await reconcile();
    const retry = await call(stack.app, 'POST', '/v1/series', { key, body, headers: { 'idempotency-key': idempotencyKey } });
    expect({ status: retry.status, id: retry.body?.id, replayed: retry.headers.get('idempotent-replayed') }).toEqual({
      status: 201,
      id: seriesId,
      replayed: 'true',
    });
    expect(await stack.h.orm.em.fork().count(Series, { content: body.content })).toBe(1);
  });

  test('a create cut off before its commit: the key is free at once, and the retry creates the post', async () => {
    const { ch, key } = await account();
    const body = { content: `refused once ${crypto.randomUUID()}`, channelIds: [ch.id], publishAt: await later() };
    const conn = stack.h.orm.em.fork().getConnection();
    // The insert fails inside the create's transaction (as a connection lost before COMMIT), in
    // both of the create's attempts (its batch, then alone), then never again.
    const tag = crypto.randomUUID().replaceAll('-', '');
    await conn.execute(`create sequence refuse_${tag}`);
    await conn.execute(
      `create function refuse_${tag}() returns trigger language plpgsql as $$
       begin
         if new.content = '${body.content}' and nextval('refuse_${tag}') <= 2 then raise exception 'injected before commit'; end if;
         return new;
       end $$`,
    );
    await conn.execute(`create trigger refuse_${tag} before insert on posts for each row execute function refuse_${tag}()`);
    try {
      const idempotencyKey = `before-${crypto.randomUUID()}`;
      const first = await call(stack.app, 'POST', '/v1/posts', { key, body, headers: { 'idempotency-key': idempotencyKey } });
      expect(first.status).toBe(500);
      expect(await stack.h.orm.em.fork().count(Post, { content: body.content })).toBe(0);
      const retry = await call(stack.app, 'POST', '/v1/posts', { key, body, headers: { 'idempotency-key': idempotencyKey } });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(await stack.h.orm.em.fork().count(Post, { content: body.content })).toBe(1);
    } finally {
      await conn.execute(`drop trigger refuse_${tag} on posts`);
      await conn.execute(`drop function refuse_${tag}()`);
      await conn.execute(`drop sequence refuse_${tag}`);
    }
  });
});

describe('exact under concurrency in one process (checks and insert under the lock, not the start)', () => {
  test('plan limit: 50 concurrent creates with 10 slots left → exactly 10 created, 40 limit_reached', async () => {
    const { org, ch, key } = await account();
    // 990 of PRO's 1,000 pending posts already (written directly).
    const at = new Date(await later(20));
    await stack.h.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, created_at, updated_at)
         select 'post_fill_' || g || '_' || ?, ?, 'scheduled', 'filler ' || g, '{}', '[]', 'api', ?, now(), now() from generate_series(1, 990) g`,
        [org.id, org.id, at],
      );
    const publishAt = await later();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(stack.app, 'POST', '/v1/posts', { key, body: { content: `limit race ${i}`, channelIds: [ch.id], publishAt } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 403)).toHaveLength(40);
    for (const a of answers.filter((x) => x.status === 403)) expect(a.body.error.code).toBe('limit_reached');
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id, status: 'scheduled' })).toBe(1000);
    for (const a of answers.filter((x) => x.status === 201)) expect(await workflowStatus(a.body.id)).toBe('RUNNING');
  });

  test('duplicate_post: 20 concurrent creates of one text to one channel → exactly one created, 19 duplicate_post naming it', async () => {
    const org = await makeOrg('TEAM');
    const ch = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const body = { content: `same text ${crypto.randomUUID()}`, channelIds: [ch.id], publishAt: await later() };
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(stack.app, 'POST', '/v1/posts', { key, body })));
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    const refused = answers.filter((a) => a.status === 409);
    expect(refused).toHaveLength(19);
    for (const r of refused)
      expect(r.body.error).toMatchObject({ code: 'duplicate_post', details: { postId: created[0]!.body.id, channelId: ch.id } });
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id })).toBe(1);
  });
});

describe('on a real Temporal dev server: the reconciler schedule, and exactness across two API processes', () => {
  let temporal: KillableTemporal;
  let connection: NativeConnection;
  let client: Client;
  let worker: Awaited<ReturnType<typeof createWorker>>;
  let running: Promise<void>;
  const taskQueue = `reconcile-${crypto.randomUUID()}`;

  beforeAll(async () => {
    temporal = await startKillableTemporal();
    connection = await NativeConnection.connect({ address: temporal.address });
    client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
    const h = await harness();
    worker = await createWorker({
      connection,
      namespace: 'default',
      taskQueue,
      deps: { orm: h.orm, credentialsKey: h.credentialsKey },
      workflowBundle: await h.workflowBundle(),
    });
    running = worker.run();
  });
  afterAll(async () => {
    await client?.schedule
      .getHandle(POST_RECONCILER_SCHEDULE_ID)
      .delete()
      .catch(() => {});
    worker?.shutdown();
    await running?.catch(() => {});
    await connection?.close();
    await client?.connection.close();
    await temporal?.kill();
  });

  test('every worker creates or updates it at start; a run starts a committed post left pending', async () => {
    const h = await harness();
    const logger = createLogger({ level: 'error', write: () => {} });
    expect(SERVICE_SCHEDULES.map((s) => s.id)).toContain(POST_RECONCILER_SCHEDULE_ID);
    // Twice: the second start of a worker updates the schedule it finds.
    await ensureSchedules(client, { taskQueue, logger });
    await ensureSchedules(client, { taskQueue, logger });
    const handle = client.schedule.getHandle(POST_RECONCILER_SCHEDULE_ID);
    const d = await handle.describe();
    expect(d.action.type).toBe('startWorkflow');
    if (d.action.type !== 'startWorkflow') throw new Error('unreachable');
    expect(d.action.workflowType).toBe(POST_RECONCILER_WORKFLOW_TYPE);
    expect(d.action.taskQueue).toBe(taskQueue);
    expect(d.action.args).toEqual([POST_RECONCILER_INPUT]);
    expect(d.spec.intervals?.[0]?.every).toBe(Number.parseInt(POST_RECONCILER_EVERY, 10) * 1000);

    // A post committed a minute ago whose start was lost.
    const org = await makeOrg('PRO');
    const ch = await makeChannel(org.id, 'MASTODON');
    const id = newId('post');
    const conn = h.orm.em.fork().getConnection();
    await conn.execute(
      `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, workflow_id,
         workflow_pending, created_at, updated_at)
       values (?, ?, 'scheduled', 'via the schedule', '{}', '[]', 'api', now() + interval '5 days', ?, true, now() - interval '1 minute', now())`,
      [id, org.id, postWorkflowId(id)],
    );
    await conn.execute(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, created_at, updated_at)
       values (?, ?, ?, 'MASTODON', 'draft', 'via the schedule', now(), now())`,
      [newId('pc'), id, ch.id],
    );
    await handle.trigger();
    let pending: boolean | undefined = true;
    for (let i = 0; i < 300 && pending; i++) {
      await Bun.sleep(100);
      pending = await pendingOf(id);
    }
    expect(pending).toBe(false);
    const started = await client.workflow.getHandle(postWorkflowId(id)).describe();
    expect(started.status.name).toBe('RUNNING');
    expect(started.taskQueue).toBe(taskQueue);
    await client.workflow.getHandle(postWorkflowId(id)).terminate('test finished');
  }, 120_000);

  const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

  /** Two API processes on the test Postgres and this dev server (the lock must hold across processes, not only within one). */
  async function twoApiProcesses() {
    const h = await harness();
    const procs = [0, 1].map(() =>
      Bun.spawn([process.execPath, 'run', 'test/harness/api-process.ts'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: h.databaseUrl, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue },
        stdout: 'pipe',
        stderr: 'inherit',
      }),
    );
    const ports: number[] = [];
    for (const p of procs) {
      const reader = p.stdout.getReader();
      let out = '';
      while (!/ready (\d+)/.test(out)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`API process exited: ${out}`);
        out += new TextDecoder().decode(value);
      }
      ports.push(Number(/ready (\d+)/.exec(out)![1]));
      reader.releaseLock();
    }
    const post = async (i: number, key: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${ports[i % 2]}/v1/posts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    // Warm: each process has created posts before (pool connections open, code compiled), so the
    // burst below meets both at full speed and their transactions overlap.
    const org = await makeOrg('TEAM');
    const ch = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    for (let i = 0; i < 6; i++) {
      const warm = await post(i, key, { content: `warm-up ${i} ${crypto.randomUUID()}`, channelIds: [ch.id], publishAt: inDays(5) });
      expect(warm.status).toBe(201);
    }
    const stop = async () => {
      for (const p of procs) p.kill('SIGTERM');
      await Promise.all(procs.map((p) => p.exited));
    };
    return { post, stop };
  }

  test('plan limit across two API processes: 50 concurrent creates with 10 slots left → exactly 10', async () => {
    const org = await makeOrg('PRO');
    const ch = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    await (await harness()).orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, created_at, updated_at)
         select 'post_fill_' || g || '_' || ?, ?, 'scheduled', 'filler ' || g, '{}', '[]', 'api', ?, now(), now() from generate_series(1, 990) g`,
        [org.id, org.id, new Date(inDays(20))],
      );
    const api = await twoApiProcesses();
    try {
      const publishAt = inDays(5);
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => api.post(i, key, { content: `two processes ${i}`, channelIds: [ch.id], publishAt })),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(10);
      expect(statuses.filter((s) => s === 403)).toHaveLength(40);
      expect(await (await harness()).orm.em.fork().count(Post, { organization: org.id, status: 'scheduled' })).toBe(1000);
    } finally {
      await api.stop();
    }
  }, 120_000);

  test('duplicate_post across two API processes: 20 concurrent identical creates → exactly one (three rounds)', async () => {
    const org = await makeOrg('TEAM');
    const ch = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    const api = await twoApiProcesses();
    try {
      // Three rounds, three texts: each round is a race that a missing lock loses only sometimes.
      for (let round = 1; round <= 3; round++) {
        const body = { content: `same text ${crypto.randomUUID()}`, channelIds: [ch.id], publishAt: inDays(5) };
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => api.post(i, key, body)));
        expect({ round, created: answers.filter((a) => a.status === 201).length }).toEqual({ round, created: 1 });
        expect(answers.filter((a) => a.status === 409 && a.body.error.code === 'duplicate_post')).toHaveLength(19);
        expect(await (await harness()).orm.em.fork().count(Post, { organization: org.id })).toBe(round);
      }
    } finally {
      await api.stop();
    }
  }, 120_000);
});
