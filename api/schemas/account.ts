// GET /v1/me and /v1/me/member.
import { t } from 'elysia';
import { strict, DateTime, oneOf } from './primitives.ts';

export const KeyMemberSchema = t.Object(
  {
    member: t.Union(
      [
        t.Object(
          {
            userId: t.String(),
            email: t.String(),
            role: oneOf(['owner', 'admin', 'editor', 'contributor', 'viewer'], 'The member’s role in the organization now.'),
          },
          strict,
        ),
        t.Null(),
      ],
      { description: 'The member who made the key in the web app; null for a key an operator made (the CLI).' },
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
        prefix: t.String({ description: 'The first 12 characters of the key, to recognise it.' }),
        scopes: t.Array(t.Union([t.Literal('read'), t.Literal('generate'), t.Literal('publish'), t.Literal('approve')])),
        channels: t.Union([t.Literal('all'), t.Array(t.String())], { description: '`all`, or the channel ids the key is limited to.' }),
        expiresAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
      },
      strict,
    ),
    quota: t.Object(
      {
        requestsPerMinute: t.Integer(),
        requestsPerMonth: t.Union([t.Integer(), t.Null()], { description: 'null means unlimited.' }),
        usedThisMonth: t.Integer(),
        resetsAt: DateTime('Start of the next quota period (00:00 UTC on the first of next month).'),
      },
      strict,
    ),
  },
  strict,
);
