// Many scheduled posts fast, for the benchmarks that need thousands of them asleep or due at once
// (bench/burst-lateness.ts, bench/worker-memory.ts): the rows written straight to Postgres in
// batches, committed, then each post's workflow started with client.workflow.start — the same
// rows, input, workflow id and search attributes as POST /v1/posts, without the API's per-request
// checks (which bench/api-throughput.ts measures). Plus extra channels copied from the stack's one,
// and what the benchmarks with many posts asleep share: waiting until the worker has caught up,
// and checking that a sample of them is asleep on its timer.
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { newId } from '../lib/ids.ts';
import { postSearchAttributes } from '../workflows/search-attributes.ts';
import { POST_WORKFLOW_TYPE, postWorkflowId, type PostWorkflow, type PostWorkflowInput } from '../workflows/post-types.ts';
import { temporal as proto } from '@temporalio/proto';
import { isStopping, pool, say, type BenchStack } from './stack.ts';

/** `n` channels of the bench organization: the stack's own plus copies of it (same credentials, same fake). */
export async function benchChannels(stack: Pick<BenchStack, 'orm' | 'channelId'>, n: number): Promise<string[]> {
  const ids = [stack.channelId];
  const conn = stack.orm.em.fork().getConnection();
  for (let i = 1; i < n; i++) {
    const id = newId('ch');
    // Every column copied (whatever the schema holds today), with a new id and name.
    await conn.execute(
      `insert into channels select (jsonb_populate_record(null::channels, to_jsonb(c) || jsonb_build_object('id', ?::text, 'name', ?::text))).* from channels c where c.id = ?`,
      [id, `Bench Mastodon ${i + 1}`, stack.channelId],
    );
    ids.push(id);
  }
  return ids;
}

export interface SeedOptions {
  count: number;
  /** Channels, used in turn (post i goes to channelIds[i % n]). */
  channelIds: string[];
  publishAt: (i: number) => Date;
  text: (i: number) => string;
  /** Workflow starts in flight. */
  concurrency: number;
  /** Rows per insert statement. */
  batch?: number;
  onProgress?: (started: number) => void;
}

/** What seeding needs: the bench organization's database and its Temporal server. */
export type SeedTarget = Pick<BenchStack, 'orm' | 'client' | 'taskQueue' | 'organizationId'>;

/**
 * Writes and commits the rows of posts [0, count), then starts their workflows. Returns the post
 * ids, and the seconds the starts took (rows excluded: the ceiling of raw workflow starts).
 */
export async function seedScheduledPosts(
  stack: SeedTarget,
  o: SeedOptions,
): Promise<{ ids: string[]; startErrors: number; startSeconds: number }> {
  const batch = o.batch ?? 500;
  const ids: string[] = [];
  const inputs: PostWorkflowInput[] = [];
  for (let from = 0; from < o.count && !isStopping(); from += batch) {
    const to = Math.min(o.count, from + batch);
    const posts: unknown[] = [];
    const pcs: unknown[] = [];
    const now = new Date();
    for (let i = from; i < to; i++) {
      const id = newId('post');
      const at = o.publishAt(i);
      const channelId = o.channelIds[i % o.channelIds.length]!;
      posts.push(id, stack.organizationId, o.text(i), at, postWorkflowId(id), now, now);
      pcs.push(newId('pc'), id, channelId, o.text(i), now, now);
      ids.push(id);
      inputs.push({ postId: id, organizationId: stack.organizationId, publishAt: at.toISOString() });
    }
    const n = to - from;
    await stack.orm.em.fork().transactional(async (em) => {
      const conn = em.getConnection();
      const tx = em.getTransactionContext();
      await conn.execute(
        `insert into posts (id, organization_id, status, content, source, scheduled_at, workflow_id, created_at, updated_at) values ${rows(n, "(?, ?, 'scheduled', ?, 'api', ?, ?, ?, ?)")}`,
        posts,
        'run',
        tx,
      );
      await conn.execute(
        `insert into post_channels (id, post_id, channel_id, platform, status, content, created_at, updated_at) values ${rows(n, "(?, ?, ?, 'MASTODON', 'draft', ?, ?, ?)")}`,
        pcs,
        'run',
        tx,
      );
    });
  }
  let startErrors = 0;
  let started = 0;
  const t0 = performance.now();
  await pool(inputs.length, o.concurrency, async (i) => {
    const input = inputs[i]!;
    try {
      await stack.client.workflow.start<PostWorkflow>(POST_WORKFLOW_TYPE, {
        taskQueue: stack.taskQueue,
        workflowId: postWorkflowId(input.postId),
        args: [input],
        typedSearchAttributes: postSearchAttributes(input.organizationId, input.postId),
      });
    } catch (e) {
      if (!(e instanceof WorkflowExecutionAlreadyStartedError)) startErrors++;
    }
    started++;
    if (o.onProgress && started % 1000 === 0) o.onProgress(started);
  });
  return { ids, startErrors, startSeconds: (performance.now() - t0) / 1000 };
}

const rows = (n: number, one: string) => Array.from({ length: n }, () => one).join(', ');

/** A short run id for the texts of one benchmark run (distinct texts: duplicate_post never applies). */
export const runTag = () => randomUUID().slice(0, 8);

/**
 * Waits until the worker has processed every started workflow up to its timer: the task
 * queue's backlogs are empty (when the server reports them) and the worker's CPU has been
 * quiet for 2 s. Returns the seconds it took.
 */
export async function settle(stack: BenchStack, what: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  const deadline = Date.now() + timeoutMs;
  let lastCpu = stack.worker.cpuMs();
  let quietSince: number | undefined;
  while (!isStopping()) {
    await Bun.sleep(500);
    const cpu = stack.worker.cpuMs();
    const busy = (cpu - lastCpu) / 500; // share of one core over the last 0.5 s
    lastCpu = cpu;
    const backlog = await backlogs(stack);
    const idle = busy < 0.05 && (backlog === undefined || backlog === 0);
    if (!idle) quietSince = undefined;
    else quietSince ??= performance.now();
    if (quietSince !== undefined && performance.now() - quietSince >= 2000) break;
    if (Date.now() > deadline) {
      say(`  ${what}: the worker was still busy after ${timeoutMs} ms (backlog ${backlog ?? 'n/a'}); measuring anyway`);
      break;
    }
  }
  // Minus the quiet period that proved it was done.
  return Math.max(0, (performance.now() - t0 - 2000) / 1000);
}

/** Approximate workflow + activity task backlog of the task queue (the stack's by default), if the server reports it. */
export async function backlogs(
  stack: Pick<BenchStack, 'client' | 'namespace' | 'taskQueue'>,
  taskQueue = stack.taskQueue,
): Promise<number | undefined> {
  const T = proto.api.enums.v1.TaskQueueType;
  let total = 0;
  for (const taskQueueType of [T.TASK_QUEUE_TYPE_WORKFLOW, T.TASK_QUEUE_TYPE_ACTIVITY]) {
    try {
      const res = await stack.client.workflowService.describeTaskQueue({
        namespace: stack.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType,
        reportStats: true,
      });
      const n = res.stats?.approximateBacklogCount;
      if (n === undefined || n === null) return undefined;
      total += Number(n);
    } catch {
      return undefined;
    }
  }
  return total;
}

/** Checks a sample of the posts' workflows: their histories end with a started timer. */
export async function checkSleeping(stack: BenchStack, ids: string[], n: number) {
  const E = proto.api.enums.v1.EventType;
  const step = Math.max(1, Math.floor(ids.length / n));
  let sampled = 0;
  let asleep = 0;
  const other = new Map<string, number>();
  for (let i = 0; i < ids.length && sampled < n; i += step) {
    sampled++;
    try {
      const h = await stack.client.workflow.getHandle(postWorkflowId(ids[i]!)).fetchHistory();
      const events = h.events ?? [];
      const fired = events.some((e) => e.eventType === E.EVENT_TYPE_TIMER_FIRED);
      const timer = events.some((e) => e.eventType === E.EVENT_TYPE_TIMER_STARTED);
      if (timer && !fired) asleep++;
      else {
        const last = E[events.at(-1)?.eventType ?? 0] ?? 'no events';
        other.set(last, (other.get(last) ?? 0) + 1);
      }
    } catch (e) {
      other.set((e as Error).message.slice(0, 60), (other.get((e as Error).message.slice(0, 60)) ?? 0) + 1);
    }
  }
  return { sampled, asleep, other: sampled - asleep, otherWhat: [...other].map(([k, v]) => `${k} ×${v}`).join(', ') };
}
