// The API process's admission in memory: what services/admission.ts decides in one statement per
// request, decided here from Postgres reads that many requests share. Rules:
//
// 1. Records. A key's record and its organization's (scopes, channels, expiry, revocation, plan)
//    come from a lease (below) and are kept until a change to either row is announced: the
//    triggers on api_keys, organizations and usage_counters NOTIFY `postpilot_admission`, which
//    this process hears through its change feed (db/change-feed.ts), and this process's own
//    changes tell it after their commit (db/admission-changes.ts). While the feed is down nothing
//    is kept: every request takes the exact statement.
// 2. Rate (per key, per minute). A lease takes n consecutive places of the key's current window in
//    rate_limits (the statement's row and upsert), and this process hands them to its requests in
//    order: a request's place is its place among every process's requests of the key, and a
//    place past the plan's limit is refused. A lease ends with its window. With one API process
//    the limit is exact. With several, a place leased and not used is lost, so a key can be
//    refused before its limit by the places other processes still hold: a lease takes at most a
//    quarter of what remains of the limit (one place near the end).
// 3. Quota (per organization, per month). Counted in memory and written behind within FLUSH_MS.
//    An organization within QUOTA_MARGIN of its quota is admitted by the exact statement, after
//    this process's counts are written: exact with one process; with several, the counts the
//    others have not written yet (FLUSH_MS of their traffic) can pass the quota.
// 4. Last used. The lease stamps it as the statement does (the first use of a key shows at once);
//    later stamps are written behind with the counts, at most once a minute per key.
// 5. Everything else takes the exact statement: an unknown hash, a revoked or expired key, a plan
//    without API access, a new month. Refusals for the key are never kept.
import type { Pool } from 'pg';
import type { ChangeFeed } from '../db/change-feed.ts';
import { onAdmissionChange, type AdmissionChange } from '../db/admission-changes.ts';
import { PLAN_LIMITS, type Plan } from '../lib/plans.ts';
import {
  createAdmissionBatcher,
  FOUND_CTES,
  KEY_JSON,
  keyRecords,
  LAST_USED_RESOLUTION_SECONDS,
  PLAN_LIMITS_JSON,
  RATE_WINDOW_MS,
  rateUpsert,
  TOUCHED_CTE,
  type Admission,
  type AdmissionRequest,
  type KeyRecord,
  type KeyRow,
  type OrganizationRecord,
} from './admission.ts';

/** The channel the triggers notify: payload `key:<id>` or `org:<id>`. */
export const ADMISSION_CHANNEL = 'postpilot_admission';
/** Counts and last-used stamps are written at most this long after the request. */
export const FLUSH_MS = 250;
/** Within this many requests of its monthly quota an organization is admitted by the exact statement. */
export const QUOTA_MARGIN = 1_000;
/** A lease's places: from 1, doubling while leases run out within a second, halving when one ends unused. */
const MAX_LEASE = 64;
const FIRST_LEASE = 8;

interface Lease {
  /** The next place to hand out, the last one leased, and the window's end (ms). */
  next: number;
  last: number;
  expire: number;
  at: number;
}

interface Entry {
  key: KeyRecord;
  organization: OrganizationRecord;
  rpm: number;
  monthly: number | null;
  lease: Lease | null;
  /** Places of the next lease. */
  size: number;
  /** A lease under way; the requests that need one wait for it. */
  leasing: Promise<void> | null;
}

/** An organization's count for a month: the best figure this process knows, and what it has not written. */
interface Usage {
  used: number | null;
  unwritten: number;
}

interface LeaseRequest {
  hash: string;
  at: Date;
  period: string;
  n: number;
}

interface LeaseRow extends KeyRow {
  counts: boolean;
  /** The last place leased and the window's end; null when the key does not count. */
  points: number | null;
  expire: number | null;
  used: number;
}

/** $1 requests {ord, hash, at, period, n}, $2 the plans' limits, $3 the last-used resolution (s), $4 now (ms), $5 the window (ms). */
const LEASE_SQL = `with ${FOUND_CTES},
  rate as (
    insert into rate_limits as t (key, points, expire)
    select 'rpm:' || plan || ':' || key_id, n, $4::bigint + $5::bigint from found where counts and n > 0 order by 1
    ${rateUpsert('$4')}
  ),
  ${TOUCHED_CTE}
  select coalesce(json_agg(${KEY_JSON}::jsonb || jsonb_build_object(
      'ord', f.ord, 'counts', f.counts, 'points', r.points, 'expire', r.expire, 'used', coalesce(u.requests, 0))), '[]')::text as answer
  from found f
  left join rate r on r.key = 'rpm:' || f.plan || ':' || f.key_id
  left join touched tu on tu.id = f.key_id
  left join usage_counters u on u.organization_id = f.org_id and u.period = f.period`;

/** $1 counts [{org_id, period, n}], $2 stamps [{key_id, at}], $3 the last-used resolution (s). */
const WRITE_SQL = `with counts as (
    insert into usage_counters as u (organization_id, period, requests)
    select org_id, period, n from jsonb_to_recordset($1::jsonb) as c(org_id text, period text, n int) order by 1, 2
    on conflict (organization_id, period) do update set requests = u.requests + excluded.requests
    returning 1
  ),
  stamps as (
    update api_keys k set last_used_at = s.at
    from jsonb_to_recordset($2::jsonb) as s(key_id text, at timestamptz)
    where k.id = s.key_id and (k.last_used_at is null or k.last_used_at < s.at - make_interval(secs => $3::int))
    returning 1
  )
  select (select count(*) from counts) + (select count(*) from stamps) as n`;

export interface AdmissionCache {
  admit(request: AdmissionRequest): Promise<Admission>;
  /** Writes the counts and stamps not written yet (also what close does first). */
  flush(): Promise<void>;
  /** Settles once the first LISTEN attempt has ended (up, or retrying). */
  ready: Promise<void>;
  /** Whether records are kept now (the change feed is up). */
  listening(): boolean;
  close(): Promise<void>;
}

export interface AdmissionCacheOptions {
  pool: Pool;
  /** The process's change feed (the pool's database): the triggers' announcements. */
  feed: ChangeFeed;
  /** The exact statement, for what rule 5 sends there (the pool's batched admission). */
  exact: (request: AdmissionRequest) => Promise<Admission>;
  onError?: (message: string, err: unknown) => void;
}

/** Subscribes at once; until the feed is up (`ready`), every request takes the exact statement. */
export function createAdmissionCache(o: AdmissionCacheOptions): AdmissionCache {
  const report = o.onError ?? (() => {});
  const entries = new Map<string, Entry>();
  const usage = new Map<string, Usage>();
  const stamps = new Map<string, Date>();
  /** Moves on every change announced: a lease read before it does not keep its records. */
  let generation = 0;
  let closed = false;
  let flushTimer: ReturnType<typeof setTimeout> | null = null;
  let writing: Promise<void> = Promise.resolve();

  const usageOf = (orgId: string, period: string): Usage => {
    const id = `${orgId} ${period}`;
    let u = usage.get(id);
    if (!u) usage.set(id, (u = { used: null, unwritten: 0 }));
    return u;
  };

  function forget({ keyId, organizationId }: AdmissionChange): void {
    generation++;
    for (const [hash, e] of entries) {
      if (e.key.id === keyId || e.organization.id === organizationId) entries.delete(hash);
    }
    // A count changed elsewhere (a reset): read it again; what this process has not written stays.
    if (organizationId) for (const [id, u] of usage) if (id.startsWith(`${organizationId} `)) u.used = null;
  }

  function forgetAll(): void {
    generation++;
    entries.clear();
    for (const u of usage.values()) u.used = null;
  }

  const leases = createAdmissionBatcher<LeaseRequest, LeaseRow | undefined>(async (requests) => {
    const json = JSON.stringify(requests.map((r, i) => ({ ord: i, hash: r.hash, at: r.at.toISOString(), period: r.period, n: r.n })));
    const { rows } = await o.pool.query<{ answer: string }>({
      name: 'postpilot_admission_lease',
      text: LEASE_SQL,
      values: [json, PLAN_LIMITS_JSON, LAST_USED_RESOLUTION_SECONDS, Date.now(), RATE_WINDOW_MS],
    });
    const answer = JSON.parse(rows[0]!.answer) as (LeaseRow & { ord: number })[];
    const byOrd = new Array<LeaseRow | undefined>(requests.length);
    for (const row of answer) byOrd[row.ord] = row;
    return byOrd;
  });

  /** A new lease for the entry (or a first one: no entry yet). False: the key takes the exact statement. */
  async function lease(request: AdmissionRequest, e: Entry | undefined): Promise<Entry | undefined> {
    const seen = generation;
    let n = e?.size ?? FIRST_LEASE;
    const now = Date.now();
    if (e?.lease && e.lease.expire > now) n = Math.min(n, Math.max(1, Math.floor((e.rpm - e.lease.last) / 4)));
    else if (e) n = Math.min(n, Math.max(1, Math.floor(e.rpm / 4)));
    const row = await leases.admit({ hash: request.hash, at: request.at, period: request.period, n });
    if (!row?.counts || row.points === null || row.expire === null) {
      entries.delete(request.hash);
      return undefined;
    }
    const records = keyRecords(row);
    const limits = PLAN_LIMITS[row.plan as Plan];
    const u = usageOf(row.org_id, request.period);
    const read = Number(row.used) + u.unwritten;
    u.used = u.used === null ? read : Math.max(u.used, read);
    const next: Entry =
      e && e.key.id === records.key.id ? e : { ...records, rpm: 0, monthly: null, lease: null, size: FIRST_LEASE, leasing: null };
    Object.assign(next, records, { rpm: limits.requestsPerMinute, monthly: limits.requestsPerMonth });
    const points = Number(row.points);
    if (next.lease && next.lease.next > next.lease.last && now - next.lease.at < 1000) next.size = Math.min(MAX_LEASE, next.size * 2);
    next.lease = { next: points - n + 1, last: points, expire: Number(row.expire), at: now };
    // A change announced while the lease was read: its records may be older than the change.
    if (seen !== generation || !up()) {
      entries.delete(request.hash);
      return undefined;
    }
    entries.set(request.hash, next);
    return next;
  }

  function scheduleFlush(): void {
    if (flushTimer || closed) return;
    flushTimer = setTimeout(() => {
      flushTimer = null;
      void flush();
    }, FLUSH_MS);
  }

  /** Writes what is unwritten; one write at a time, in order. */
  function flush(): Promise<void> {
    writing = writing.then(async () => {
      const counts: { org_id: string; period: string; n: number }[] = [];
      const taken: [Usage, number][] = [];
      for (const [id, u] of usage) {
        if (u.unwritten === 0) continue;
        const [orgId, period] = id.split(' ') as [string, string];
        counts.push({ org_id: orgId, period, n: u.unwritten });
        taken.push([u, u.unwritten]);
        u.unwritten = 0;
      }
      const stamped = [...stamps].map(([keyId, at]) => ({ key_id: keyId, at: at.toISOString() }));
      stamps.clear();
      if (!counts.length && !stamped.length) return;
      try {
        await o.pool.query({
          name: 'postpilot_admission_write',
          text: WRITE_SQL,
          values: [JSON.stringify(counts), JSON.stringify(stamped), LAST_USED_RESOLUTION_SECONDS],
        });
      } catch (err) {
        // Kept for the next write: a count is never dropped while the process lives.
        for (const [u, n] of taken) u.unwritten += n;
        report('admission counts not written; retrying', err);
        scheduleFlush();
      }
    });
    return writing;
  }

  /** Reads a key's records and its first lease, once for the requests that arrive meanwhile. */
  const creating = new Map<string, Promise<Entry | undefined>>();
  function firstLease(request: AdmissionRequest): Promise<Entry | undefined> {
    let p = creating.get(request.hash);
    if (!p) {
      p = lease(request, undefined).finally(() => creating.delete(request.hash));
      creating.set(request.hash, p);
    }
    return p;
  }

  /** The exact statement for one request, keeping the organization's count it answers. */
  async function exactly(request: AdmissionRequest, u: Usage | undefined): Promise<Admission> {
    const answer = await o.exact(request);
    if (u && answer.found && answer.counted) u.used = Math.max(u.used ?? 0, answer.usedThisMonth + u.unwritten);
    return answer;
  }

  async function admit(request: AdmissionRequest): Promise<Admission> {
    for (;;) {
      if (!up()) return o.exact(request);
      const e = entries.get(request.hash);
      if (!e) {
        if (!(await firstLease(request))) return o.exact(request);
        continue;
      }
      const at = request.at.getTime();
      if (e.key.revokedAt || (e.key.expiresAt && e.key.expiresAt.getTime() <= at)) {
        entries.delete(request.hash);
        return o.exact(request);
      }
      const u = usageOf(e.organization.id, request.period);
      // A new month, or a count to read again: this request's answer brings it.
      if (u.used === null) return exactly(request, u);
      if (e.monthly !== null && e.monthly - u.used <= QUOTA_MARGIN) {
        await flush();
        return exactly(request, u);
      }
      const now = Date.now();
      const l = e.lease;
      if (!l || l.next > l.last || l.expire <= now) {
        if (l && l.expire <= now && l.next <= l.last) e.size = Math.max(1, Math.floor(e.size / 2));
        // Past the limit in this window: refused here, nothing more to lease before the window ends.
        if (l && l.expire > now && l.last >= e.rpm) return refuse(e, l, u);
        if (!e.leasing) {
          const current = e;
          current.leasing = lease(request, current)
            .then(() => undefined)
            .finally(() => {
              current.leasing = null;
            });
        }
        await e.leasing;
        continue;
      }
      const points = l.next++;
      if (points > e.rpm) return refuse(e, l, u);
      u.used = (u.used ?? 0) + 1;
      u.unwritten++;
      const last = e.key.lastUsedAt?.getTime();
      if (last === undefined || at - last >= LAST_USED_RESOLUTION_SECONDS * 1000) {
        e.key.lastUsedAt = request.at;
        stamps.set(e.key.id, request.at);
      }
      scheduleFlush();
      return answer(e, l, points, true, u.used);
    }
  }

  /** A counted request's answer: its place in the key's window, and the organization's count. */
  function answer(e: Entry, l: Lease, points: number, quotaOk: boolean, usedThisMonth: number): Admission {
    return {
      found: true,
      key: e.key,
      organization: e.organization,
      counted: true,
      rate: { points, resetsAt: new Date(l.expire) },
      quotaOk,
      usedThisMonth,
    };
  }

  function refuse(e: Entry, l: Lease, u: Usage): Admission {
    return answer(e, l, Math.max(l.next, e.rpm + 1), false, u.used ?? 0);
  }

  // Records are kept only while the feed's subscription is up (db/change-feed.ts).
  const feed = o.feed.listen(ADMISSION_CHANNEL, {
    change(payload) {
      const [kind, id] = payload.split(':');
      if (kind === 'key' && id) forget({ keyId: id });
      else if (kind === 'org' && id) forget({ organizationId: id });
      else forgetAll();
    },
    reset: forgetAll,
  });
  const up = () => !closed && feed.up();
  const ready = feed.ready;

  const stopListening = onAdmissionChange(forget);
  return {
    admit,
    flush,
    ready,
    listening: up,
    async close() {
      if (closed) return;
      closed = true;
      stopListening();
      feed.close();
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = null;
      await flush();
    },
  };
}
