// Admission of an authenticated request in ONE Postgres statement: the key by its hash
// with its organization, the per-minute rate limit per key, the monthly quota per organization
// and the key's last-used stamp. Read fresh by each request: a revoke, an expiry or a plan change
// counts from the very next request in every API process. The API process normally answers from
// memory (services/admission-cache.ts) and sends here what it cannot answer exactly itself.
//
// Requests that arrive while a statement is under way are sent together in the next one
// (createAdmissionBatcher): at most one round trip per request, fewer under load. The statement
// takes its row locks table by table (rate_limits, then usage_counters, then api_keys) in key
// order, so two processes' batches queue behind each other instead of deadlocking; Postgres
// serialises the increments, so counts stay exact across processes.
import { PLAN_LIMITS, PLANS, type Plan } from '../lib/plans.ts';
import type { IApiKey, IOrganization } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { sql } from '../db/sql.ts';

/** The last-used stamp is written at most once a minute per key: reads need no sharper figure. */
export const LAST_USED_RESOLUTION_SECONDS = 60;
/** rate-limiter-flexible's window (services/rate-limit.ts keeps its table layout and key names). */
export const RATE_WINDOW_MS = 60_000;

export interface AdmissionRequest {
  /** SHA-256 of the bearer key (lib/crypto.ts hashApiKey). */
  hash: string;
  /** The request's clock: key expiry and the quota period ('YYYY-MM'). */
  at: Date;
  period: string;
}

/** The columns of the key and of its organization that a request needs. */
export type KeyRecord = Pick<
  IApiKey,
  'id' | 'organization' | 'name' | 'hash' | 'prefix' | 'scopes' | 'channelIds' | 'expiresAt' | 'revokedAt' | 'lastUsedAt' | 'createdAt'
>;
export type OrganizationRecord = Pick<IOrganization, 'id' | 'name' | 'plan' | 'timeZone'>;

export type Admission =
  | { found: false }
  | {
      found: true;
      key: KeyRecord;
      organization: OrganizationRecord;
      /** Counted against the limits: the key is valid (not revoked or expired) and the plan has API access. */
      counted: boolean;
      /** Rate limit: this request's place in the key's window, and when the window ends (null without a limiter). */
      rate: { points: number; resetsAt: Date } | null;
      /** Monthly quota: admitted, and the organization's count after it (or the full count when refused). */
      quotaOk: boolean;
      usedThisMonth: number;
    };

/** The statement's one row: one JSON text (one parse in the driver), an AdmissionAnswer. */
export interface AdmissionRow {
  answer: string;
}

/**
 * Runs one statement with $n parameters and returns its rows (a pg pool, the ORM's connection).
 * `name`: a prepared statement's name, for a driver that keeps them per connection (pg): the
 * statement's plan takes longer than running it.
 */
export type Query = (text: string, values: unknown[], name: string) => Promise<AdmissionRow[]>;

/** A key of the batch with its organization, once per key (timestamps as JSON text). */
export interface KeyRow {
  key_id: string;
  org_id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string[];
  channel_ids: string[] | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
  org_name: string;
  plan: Plan;
  time_zone: string;
}

/** One request's answer; the fields after `key_id` are null when no key has the request's hash. */
interface RequestRow {
  ord: number;
  key_id: string | null;
  counts: boolean | null;
  /** The request's place in its key's rate window, and the window's end (ms); null when not counted. */
  points: number | null;
  expire: number | null;
  quota_ok: boolean | null;
  used: number | null;
}

interface AdmissionAnswer {
  keys: KeyRow[];
  /** In request order. */
  requests: RequestRow[];
}

/** The plans' limits, one parameter of the statement (a JSON array of {plan, api_access, rpm, monthly}). */
export const PLAN_LIMITS_JSON = JSON.stringify(
  PLANS.map((plan) => {
    const l = PLAN_LIMITS[plan];
    return { plan, api_access: l.apiAccess, rpm: l.requestsPerMinute, monthly: l.requestsPerMonth };
  }),
);

/**
 * What both statements (this one and services/admission-cache.ts's lease) start with: $1 the
 * requests as a JSON array of {ord, hash, at, period, n} (n: places of the rate window wanted,
 * 1 here), $2 the plans' limits (PLAN_LIMITS_JSON); `found`: each request whose hash is a key,
 * with its key, organization and plan, and whether it `counts` (a valid key of a plan with API
 * access).
 */
export const FOUND_CTES = `req as (
    select * from jsonb_to_recordset($1::jsonb) as r(ord int, hash text, at timestamptz, period text, n int)
  ),
  limits as (
    select * from jsonb_to_recordset($2::jsonb) as l(plan text, api_access boolean, rpm int, monthly int)
  ),
  found as (
    select req.ord, req.at, req.period, req.n, k.id as key_id, k.organization_id as org_id, o.plan, l.rpm, l.monthly,
      k.name, k.hash, k.prefix, k.scopes, k.channel_ids, k.expires_at, k.revoked_at, k.last_used_at, k.created_at,
      o.name as org_name, o.time_zone,
      (k.revoked_at is null and (k.expires_at is null or k.expires_at > req.at) and l.api_access) as counts
    from req
    join api_keys k on k.hash = req.hash
    join organizations o on o.id = k.organization_id
    join limits l on l.plan = o.plan
  )`;

/** The last-used stamp of each counted key, at most once per $3 seconds. */
export const TOUCHED_CTE = `touched as (
    update api_keys k set last_used_at = t.at
    from (select key_id, max(at) as at from found where counts group by key_id) t
    where k.id = t.key_id
      and (k.last_used_at is null or k.last_used_at < t.at - make_interval(secs => $3::int))
    returning k.id, k.last_used_at
  )`;

/** A key's row (KeyRow) from `found f` and `touched tu`. */
export const KEY_JSON = `json_build_object(
        'key_id', f.key_id, 'org_id', f.org_id, 'name', f.name, 'hash', f.hash, 'prefix', f.prefix, 'scopes', f.scopes,
        'channel_ids', f.channel_ids, 'expires_at', f.expires_at, 'revoked_at', f.revoked_at,
        'last_used_at', coalesce(tu.last_used_at, f.last_used_at), 'created_at', f.created_at,
        'org_name', f.org_name, 'plan', f.plan, 'time_zone', f.time_zone)`;

/**
 * The per-key window's increment (rate-limiter-flexible's layout): `excluded.points` more in the
 * current window, or a new window from `now` (a bigint parameter, ms) when the stored one ended.
 */
export const rateUpsert = (now: string) => `on conflict (key) do update set
      points = case when t.expire <= ${now}::bigint then excluded.points else t.points + excluded.points end,
      expire = case when t.expire <= ${now}::bigint then excluded.expire else t.expire end
    returning t.key, t.points, t.expire`;

/**
 * $1 the requests as a JSON array of {ord, hash, at, period}; $2 the plans' limits
 * (PLAN_LIMITS_JSON); $3 the last-used stamp's resolution in seconds. With `rateLimit` also $4
 * Date.now() and $5 the rate window in ms; without, the statement has no rate part and nobody
 * is refused for rate (an app built without a limiter).
 */
export function admissionSql(rateLimit: boolean): string {
  // `rate_ok`: the request is within its key's per-minute limit.
  const rate = rateLimit
    ? `rate_in as (
    select key_id, 'rpm:' || plan || ':' || key_id as rkey, count(*)::int as n from found where counts group by key_id, plan
  ),
  rate as (
    insert into rate_limits as t (key, points, expire)
    select rkey, n, $4::bigint + $5::bigint from rate_in order by rkey
    ${rateUpsert('$4')}
  ),
  ranked as (
    select w.*, w.points <= w.rpm as rate_ok from (
      select f.ord, f.org_id, f.period, f.monthly, f.rpm, r.expire,
        r.points - ri.n + row_number() over (partition by f.key_id order by f.ord) as points
      from found f join rate_in ri on ri.key_id = f.key_id join rate r on r.key = ri.rkey
      where f.counts
    ) w
  ),`
    : `ranked as (
    select f.ord, f.org_id, f.period, f.monthly, f.rpm, null::bigint as expire, 0::bigint as points, true as rate_ok
    from found f where f.counts
  ),`;
  return `with ${FOUND_CTES},
  ${rate}
  use_in as (
    select org_id, period, max(monthly) as monthly, count(*)::int as n
    from ranked where rate_ok group by org_id, period
  ),
  -- The current counts, locked: the grant is computed from them (the upsert below adds it). The
  -- month's first row, inserted by two processes at once, is the one case without a lock: the
  -- second adds its grant computed from 0, which could pass the quota only if it were under two
  -- batches (512 requests); the plans' quotas are 10,000 and more.
  cur as (
    select u.organization_id, u.period, u.requests from usage_counters u
    join use_in ui on ui.org_id = u.organization_id and ui.period = u.period
    order by u.organization_id, u.period for update of u
  ),
  grants as (
    select ui.org_id, ui.period, ui.n,
      case when ui.monthly is null then ui.n else least(ui.n, greatest(ui.monthly - coalesce(c.requests, 0), 0)) end as granted
    from use_in ui left join cur c on c.organization_id = ui.org_id and c.period = ui.period
  ),
  usage as (
    insert into usage_counters as u (organization_id, period, requests)
    select org_id, period, granted from grants order by org_id, period
    on conflict (organization_id, period) do update set requests = u.requests + excluded.requests
    returning u.organization_id, u.period, u.requests
  ),
  quota as (
    select rk.ord,
      rank_in_org <= g.granted as quota_ok,
      case when rank_in_org <= g.granted then us.requests - g.granted + rank_in_org else us.requests end as used
    from (
      select ranked.*, row_number() over (partition by org_id, period order by ord) as rank_in_org
      from ranked where rate_ok
    ) rk
    join grants g on g.org_id = rk.org_id and g.period = rk.period
    join usage us on us.organization_id = rk.org_id and us.period = rk.period
  ),
  ${TOUCHED_CTE}
  -- One row, one JSON value (one parse in the driver): each key once (KeyRow), then each request
  -- in order (RequestRow).
  select json_build_object(
    'keys', (select coalesce(json_agg(${KEY_JSON}), '[]')
      from (select distinct on (key_id) * from found) f left join touched tu on tu.id = f.key_id),
    'requests', (select coalesce(json_agg(json_build_object(
        'ord', req.ord, 'key_id', f.key_id, 'counts', f.counts, 'points', rk.points, 'expire', rk.expire,
        'quota_ok', q.quota_ok, 'used', q.used) order by req.ord), '[]')
      from req left join found f on f.ord = req.ord left join ranked rk on rk.ord = req.ord left join quota q on q.ord = req.ord)
  )::text as answer`;
}

const SQL_WITH_RATE = admissionSql(true);
const SQL_WITHOUT_RATE = admissionSql(false);

const toDate = (v: string | null): Date | null => (v === null ? null : new Date(v));

/** A key's row of an answer as the records a request needs. */
export function keyRecords(k: KeyRow): { key: KeyRecord; organization: OrganizationRecord } {
  return {
    key: {
      id: k.key_id,
      organization: k.org_id,
      name: k.name,
      hash: k.hash,
      prefix: k.prefix,
      scopes: k.scopes,
      channelIds: k.channel_ids,
      expiresAt: toDate(k.expires_at),
      revokedAt: toDate(k.revoked_at),
      lastUsedAt: toDate(k.last_used_at),
      createdAt: new Date(k.created_at),
    },
    organization: { id: k.org_id, name: k.org_name, plan: k.plan, timeZone: k.time_zone },
  };
}

/** One statement for these requests; the answers in the same order. A key's records are shared by its requests of the batch. */
export async function runAdmission(query: Query, requests: AdmissionRequest[], rateLimit: boolean): Promise<Admission[]> {
  const json = JSON.stringify(requests.map((r, i) => ({ ord: i, hash: r.hash, at: r.at.toISOString(), period: r.period, n: 1 })));
  const shared = [json, PLAN_LIMITS_JSON, LAST_USED_RESOLUTION_SECONDS];
  const rows = rateLimit
    ? await query(SQL_WITH_RATE, [...shared, Date.now(), RATE_WINDOW_MS], 'postpilot_admission')
    : await query(SQL_WITHOUT_RATE, shared, 'postpilot_admission_unlimited');
  const answer = JSON.parse(rows[0]!.answer) as AdmissionAnswer;
  const keys = new Map<string, { key: KeyRecord; organization: OrganizationRecord }>();
  for (const k of answer.keys) keys.set(k.key_id, keyRecords(k));
  return answer.requests.map((r): Admission => {
    const found = r.key_id === null ? undefined : keys.get(r.key_id);
    if (!found) return { found: false };
    return {
      found: true,
      ...found,
      counted: r.counts === true,
      rate: rateLimit && r.points !== null ? { points: Number(r.points), resetsAt: new Date(Number(r.expire)) } : null,
      quotaOk: r.quota_ok === true,
      usedThisMonth: Number(r.used ?? 0),
    };
  });
}

export interface AdmissionBatcher<Req = AdmissionRequest, Ans = Admission> {
  admit(request: Req): Promise<Ans>;
}

/**
 * Sends a request's admission at once when fewer than `maxInFlight` statements are under way;
 * otherwise it waits and goes with every other request that arrived meanwhile, in one statement
 * (at most `maxBatch` requests). Under load the round trips per request fall below one; alone,
 * a request waits one turn of the event loop.
 */
export function createAdmissionBatcher<Req = AdmissionRequest, Ans = Admission>(
  run: (requests: Req[]) => Promise<Ans[]>,
  { maxInFlight = 2, maxBatch = 256 }: { maxInFlight?: number; maxBatch?: number } = {},
): AdmissionBatcher<Req, Ans> {
  type Waiting = { request: Req; resolve: (a: Ans) => void; reject: (e: unknown) => void };
  let waiting: Waiting[] = [];
  let inFlight = 0;
  let flushQueued = false;

  const queueFlush = () => {
    if (flushQueued || inFlight >= maxInFlight || !waiting.length) return;
    flushQueued = true;
    // After the current task: the requests that arrive in the same turn of the event loop go together.
    setImmediate(flush);
  };

  function flush() {
    flushQueued = false;
    while (waiting.length && inFlight < maxInFlight) {
      const batch = waiting.length <= maxBatch ? waiting : waiting.slice(0, maxBatch);
      waiting = waiting.length <= maxBatch ? [] : waiting.slice(maxBatch);
      inFlight++;
      run(batch.map((w) => w.request))
        .then(
          (answers) => {
            for (let i = 0; i < batch.length; i++) batch[i]!.resolve(answers[i]!);
          },
          (err) => {
            for (const w of batch) w.reject(err);
          },
        )
        .finally(() => {
          inFlight--;
          queueFlush();
        });
    }
  }

  return {
    admit(request) {
      return new Promise<Ans>((resolve, reject) => {
        waiting.push({ request, resolve, reject });
        queueFlush();
      });
    },
  };
}

/**
 * The statement in the ORM's placeholder form: each `$n` becomes a `?`, and `order` names the
 * value each `?` takes (a `$n` used twice takes its value twice).
 */
function questionMarks(text: string): { text: string; order: number[] } {
  const order: number[] = [];
  return {
    text: text.replace(/\$(\d+)/g, (_, n: string) => {
      order.push(Number(n) - 1);
      return '?';
    }),
    order,
  };
}

/** Without a limiter's pool: the statement through the ORM's connection, one request at a time, nobody refused for rate. */
export function ormAdmission(orm: Orm): (request: AdmissionRequest) => Promise<Admission> {
  const forms = new Map<string, { text: string; order: number[] }>();
  const query: Query = (text, values) => {
    let form = forms.get(text);
    if (!form) forms.set(text, (form = questionMarks(text)));
    return sql<AdmissionRow>(
      orm.em,
      form.text,
      form.order.map((i) => values[i]),
    );
  };
  return async (request) => (await runAdmission(query, [request], false))[0]!;
}
