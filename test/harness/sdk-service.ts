// The service as the SDKs meet it: the app (a post stack with disk storage and a worker on the
// time-skipping Temporal server) on a real loopback socket, a fake Mastodon to publish to, and
// one control route of the test's own beside the app: POST /__test/rate-window?key=<keyId>&ms=<n>
// ends the key's current rate window `n` ms from now, so a client's retry after `Retry-After`
// is met in a test's time rather than a minute's.
import { afterAll, beforeAll } from 'bun:test';
import { addChannel } from '../../domain/channels.ts';
import { startFakeMastodon } from '../fakes/mastodon.ts';
import { lateBoundServer } from './browser.ts';
import { makeKey, makeOrg } from './fixtures.ts';
import { startPostStack } from './post-stack.ts';
import { sql } from '../../db/sql.ts';

export type SdkService = Awaited<ReturnType<typeof startSdkService>>;

export async function startSdkService() {
  const server = lateBoundServer();
  const fake = await startFakeMastodon();
  const stack = await startPostStack({ storage: 'disk', publicBaseUrl: server.url });
  server.setHandler(async (request) => {
    const url = new URL(request.url);
    if (url.pathname === '/__test/rate-window' && request.method === 'POST') {
      const keyId = url.searchParams.get('key') ?? '';
      await sql(stack.h.orm.em.fork(), `update rate_limits set expire = ? where key like ?`, [
        Date.now() + Number(url.searchParams.get('ms') ?? 0),
        `rpm:%:${keyId}`,
      ]);
      return new Response(null, { status: 204 });
    }
    return stack.app.handle(request);
  });
  return {
    url: server.url,
    stack,
    fake,
    /** An organization of `plan` (PRO: 60 requests a minute), its key and a Mastodon channel on the fake. */
    async account(plan = 'PRO') {
      const org = await makeOrg(plan);
      const key = await makeKey(org.id);
      const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
        organizationId: org.id,
        platform: 'MASTODON',
        name: 'Team News',
        credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
      });
      return { orgId: org.id, key: key.key, keyId: key.id, channelId: channel.id };
    },
    async stop() {
      await stack.stop();
      await fake.stop();
      server.stop();
    },
  };
}

/** Registers the file's set-up and tear-down; `ready` receives the service once started. */
export function useSdkService(ready: (s: SdkService) => void): void {
  let service: SdkService | undefined;
  beforeAll(async () => {
    service = await startSdkService();
    ready(service);
  });
  afterAll(async () => {
    await service?.stop();
  });
}
