// Activities are built from a factory that takes their dependencies (DESIGN.md §5); each forks
// its own EntityManager.
import type { Orm } from '../db/orm.ts';
import type { Connectors } from '../platforms/types.ts';
import { createPostActivities } from './posts.ts';
import { createMediaActivities } from './media.ts';
import type { VisionConfig } from './vision.ts';
import type { ObjectStorage } from '../storage/types.ts';

export interface ActivityDeps {
  orm: Orm;
  connectors?: Connectors;
  /** Decrypts channel credentials; required to publish. */
  credentialsKey?: Buffer;
  storage?: ObjectStorage;
  /** The optional vision pass (an OpenAI-compatible chat-completions endpoint). */
  vision?: VisionConfig;
  now?: () => Date;
}

export function createActivities(deps: ActivityDeps) {
  return {
    async ping(message: string): Promise<{ echo: string; database: string }> {
      const rows = await deps.orm.em.fork().getConnection().execute<{ v: string }[]>('select version() as v');
      return {
        echo: message,
        database: String(rows[0]?.v ?? '')
          .split(' ')
          .slice(0, 2)
          .join(' '),
      };
    },
    ...createPostActivities({
      orm: deps.orm,
      connectors: deps.connectors ?? {},
      credentialsKey: deps.credentialsKey,
      storage: deps.storage,
      now: deps.now,
    }),
    ...createMediaActivities({ orm: deps.orm, storage: deps.storage, vision: deps.vision }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
