// Admission of an authenticated request in ONE Postgres statement (issue 15): the key by its hash
// with its organization, the per-minute rate limit per key, the monthly quota per organization
// and the key's last-used stamp. No cache: a revoke, an expiry or a plan change counts from the
// very next request in every API process, because every request reads the rows.
//
// Requests that arrive while a statement is under way are sent together in the next one
// (createAdmissionBatcher): at most one round trip per request, fewer under load. The statement
// takes its row locks table by table (rate_limits, then usage_counters, then api_keys) in key
// order, so two processes' batches queue behind each other instead of deadlocking; Postgres
// serialises the increments, so counts stay exact across processes.
import { PLAN_LIMITS, PLANS, type Plan } from '../lib/plans.ts';
import type { IApiKey, IOrganization } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';

/** The last-used stamp is written at most once a minute per key: reads need no sharper figure. */
export const LAST_USED_RESOLUTION_SECONDS = 60;
/** rate-limiter-flexible's window (services/rate-limit.ts keeps its table layout and key names). */
const RATE_WINDOW_MS = 60_000;

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

/**
 * Runs one statement with $n parameters and returns its rows (a pg pool, the ORM's connection).
 * `name`: a prepared statement's name, for a driver that keeps them per connection (pg): the
 * statement's plan takes longer than running it.
 */
export type Query = (text: string, values: unknown[], name: string) => Promise<Record<string, unknown>[]>;

const PLAN_VALUES = PLANS.map((plan) => {
  const l = PLAN_LIMITS[plan];
  return `('${plan}', ${l.apiAccess}, ${l.requestsPerMinute}, ${l.requestsPerMonth ?? 'null'}::int)`;
}).join(', ');

/**
 * $1 the requests as a JSON array of {ord, hash, at, period}; $2 Date.now() for the rate windows
 * (only with `rateLimit`; without, nobody is refused for rate: an app built without a limiter).
 */
export function admissionSql(rateLimit: boolean): string {
  const rate = rateLimit
    ? `rate_in as (
    select key_id, 'rpm:' || plan || ':' || key_id as rkey, count(*)::int as n from found where counts group by key_id, plan
  ),
  rate as (
    insert into rate_limits as t (key, points, expire)
    select rkey, n, $2::bigint + ${RATE_WINDOW_MS} from rate_in order by rkey
    on conflict (key) do update set
      points = case when t.expire <= $2::bigint then excluded.points else t.points + excluded.points end,
      expire = case when t.expire <= $2::bigint then excluded.expire else t.expire end
    returning t.key, t.points, t.expire
  ),
  ranked as (
    select f.ord, f.org_id, f.period, f.monthly, f.rpm, r.expire,
      r.points - ri.n + row_number() over (partition by f.key_id order by f.ord) as points
    from found f join rate_in ri on ri.key_id = f.key_id join rate r on r.key = ri.rkey
    where f.counts
  ),`
    : `ranked as (
    select f.ord, f.org_id, f.period, f.monthly, f.rpm, null::bigint as expire, 0::bigint as points from found f where f.counts
  ),`;
  return `with req as (
    select * from jsonb_to_recordset($1::jsonb) as r(ord int, hash text, at timestamptz, period text)
  ),
  limits(plan, api_access, rpm, monthly) as (values ${PLAN_VALUES}),
  found as (
    select req.ord, req.at, req.period, k.id as key_id, k.organization_id as org_id, o.plan, l.rpm, l.monthly,
      k.name, k.hash, k.prefix, k.scopes, k.channel_ids, k.expires_at, k.revoked_at, k.last_used_at, k.created_at,
      o.name as org_name, o.time_zone,
      (k.revoked_at is null and (k.expires_at is null or k.expires_at > req.at) and l.api_access) as counts
    from req
    join api_keys k on k.hash = req.hash
    join organizations o on o.id = k.organization_id
    join limits l on l.plan = o.plan
  ),
  ${rate}
  use_in as (
    select org_id, period, max(monthly) as monthly, count(*)::int as n
    from ranked where points <= rpm or ${rateLimit ? 'false' : 'true'} group by org_id, period
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
      from ranked where points <= rpm or ${rateLimit ? 'false' : 'true'}
    ) rk
    join grants g on g.org_id = rk.org_id and g.period = rk.period
    join usage us on us.organization_id = rk.org_id and us.period = rk.period
  ),
  touched as (
    update api_keys k set last_used_at = t.at
    from (select key_id, max(at) as at from found where counts group by key_id) t
    where k.id = t.key_id
      and (k.last_used_at is null or k.last_used_at < t.at - interval '${LAST_USED_RESOLUTION_SECONDS} seconds')
    returning k.id, k.last_used_at
  )
  -- One row, one JSON value (one parse in the driver): each key once, then each request in order.
  select json_build_object(
    'keys', (select coalesce(json_agg(json_build_array(
        f.key_id, f.org_id, f.name, f.hash, f.prefix, f.scopes, f.channel_ids, f.expires_at, f.revoked_at,
        coalesce(tu.last_used_at, f.last_used_at), f.created_at, f.org_name, f.plan, f.time_zone)), '[]')
      from (select distinct on (key_id) * from found) f left join touched tu on tu.id = f.key_id),
    'requests', (select coalesce(json_agg(json_build_array(req.ord, f.key_id, f.counts, rk.points, rk.expire, q.quota_ok, q.used)
        order by req.ord), '[]')
      from req left join found f on f.ord = req.ord left join ranked rk on rk.ord = req.ord left join quota q on q.ord = req.ord)
  )::text as answer`;
}

const SQL_WITH_RATE = admissionSql(true);
const SQL_WITHOUT_RATE = admissionSql(false);

const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));

type KeyTuple = [
  string,
  string,
  string,
  string,
  string,
  string[],
  string[] | null,
  string | null,
  string | null,
  string | null,
  string,
  string,
  Plan,
  string,
];
type RequestTuple = [number, string | null, boolean | null, number | null, number | null, boolean | null, number | null];

/** One statement for these requests; the answers in the same order. A key's records are shared by its requests of the batch. */
export async function runAdmission(query: Query, requests: AdmissionRequest[], rateLimit: boolean): Promise<Admission[]> {
  const json = JSON.stringify(requests.map((r, i) => ({ ord: i, hash: r.hash, at: r.at.toISOString(), period: r.period })));
  const rows = rateLimit
    ? await query(SQL_WITH_RATE, [json, Date.now()], 'postpilot_admission')
    : await query(SQL_WITHOUT_RATE, [json], 'postpilot_admission_unlimited');
  const answer = JSON.parse(String(rows[0]!.answer)) as { keys: KeyTuple[]; requests: RequestTuple[] };
  const keys = new Map<string, { key: KeyRecord; organization: OrganizationRecord }>();
  for (const k of answer.keys) {
    keys.set(k[0], {
      key: {
        id: k[0],
        organization: k[1],
        name: k[2],
        hash: k[3],
        prefix: k[4],
        scopes: k[5],
        channelIds: k[6],
        expiresAt: toDate(k[7]),
        revokedAt: toDate(k[8]),
        lastUsedAt: toDate(k[9]),
        createdAt: new Date(k[10]),
      },
      organization: { id: k[1], name: k[11], plan: k[12], timeZone: k[13] },
    });
  }
  return answer.requests.map(([, keyId, counts, points, expire, quotaOk, used]): Admission => {
    const found = keyId === null ? undefined : keys.get(keyId);
    if (!found) return { found: false };
    return {
      found: true,
      ...found,
      counted: counts === true,
      rate: rateLimit && points !== null ? { points: Number(points), resetsAt: new Date(Number(expire)) } : null,
      quotaOk: quotaOk === true,
      usedThisMonth: Number(used ?? 0),
    };
  });
}

export interface AdmissionBatcher {
  admit(request: AdmissionRequest): Promise<Admission>;
}

/**
 * Sends a request's admission at once when fewer than `maxInFlight` statements are under way;
 * otherwise it waits and goes with every other request that arrived meanwhile, in one statement
 * (at most `maxBatch` requests). Under load the round trips per request fall below one; alone,
 * a request waits one turn of the event loop.
 */
export function createAdmissionBatcher(
  run: (requests: AdmissionRequest[]) => Promise<Admission[]>,
  { maxInFlight = 2, maxBatch = 256 }: { maxInFlight?: number; maxBatch?: number } = {},
): AdmissionBatcher {
  type Waiting = { request: AdmissionRequest; resolve: (a: Admission) => void; reject: (e: unknown) => void };
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
      return new Promise<Admission>((resolve, reject) => {
        waiting.push({ request, resolve, reject });
        queueFlush();
      });
    },
  };
}

/** Without a limiter's pool: the statement through the ORM's connection, one request at a time, nobody refused for rate. */
export function ormAdmission(orm: Orm): (request: AdmissionRequest) => Promise<Admission> {
  // The ORM takes `?` placeholders; this statement has one parameter.
  const query: Query = (text, values) => orm.em.getConnection().execute(text.replace('$1', '?'), values);
  return async (request) => (await runAdmission(query, [request], false))[0]!;
}
