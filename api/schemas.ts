// Response shapes of SPEC.md §2, as TypeBox schemas: Elysia checks handlers against them and
// they document the API. `additionalProperties: false` keeps the objects to exactly these fields.
import { t } from 'elysia';

const strict = { additionalProperties: false } as const;
const DateTime = t.String({ format: 'date-time' });

export const ErrorSchema = t.Object(
  {
    error: t.Object(
      {
        code: t.String(),
        message: t.String(),
        details: t.Optional(t.Record(t.String(), t.Unknown())),
      },
      strict,
    ),
  },
  strict,
);

export const MeSchema = t.Object(
  {
    organization: t.Object(
      {
        id: t.String(),
        name: t.String(),
        plan: t.Union([t.Literal('FREE'), t.Literal('PRO'), t.Literal('TEAM'), t.Literal('ENTERPRISE')]),
      },
      strict,
    ),
    key: t.Object(
      {
        name: t.String(),
        prefix: t.String(),
        scopes: t.Array(t.Union([t.Literal('read'), t.Literal('generate'), t.Literal('publish')])),
        channels: t.Union([t.Literal('all'), t.Array(t.String())]),
        expiresAt: t.Union([DateTime, t.Null()]),
      },
      strict,
    ),
    quota: t.Object(
      {
        requestsPerMinute: t.Integer(),
        requestsPerMonth: t.Union([t.Integer(), t.Null()]),
        usedThisMonth: t.Integer(),
        resetsAt: DateTime,
      },
      strict,
    ),
  },
  strict,
);

export const ChannelSchema = t.Object(
  {
    id: t.String(),
    platform: t.String(),
    name: t.String(),
    status: t.String(),
    rules: t.Object(
      { requiresMedia: t.Boolean(), maxChars: t.Integer(), requiredFields: t.Array(t.String()) },
      strict,
    ),
  },
  strict,
);

export const ChannelListSchema = t.Object({ data: t.Array(ChannelSchema) }, strict);
