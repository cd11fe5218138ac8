// `npm run cluster`'s Temporal UI answers without signing in and shows every organization's
// workflows: it listens on loopback unless told otherwise. What the cluster hands the UI server
// (scripts/cluster/stack.ts uiChild) is checked here without starting a cluster; where the UI
// server is built (sh scripts/setup.sh --cluster), it is started alone and asked where it listens.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_UI_HOST, uiAuthEnv, uiChild, uiUrl } from '../scripts/cluster/stack.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'postpilot-cluster-ui-'));
  dirs.push(d);
  return d;
}

// The shape of the UI image's config/docker.yaml: a template that names no listen address.
const TEMPLATE =
  '# enable-template\ntemporalGrpcAddress: {{ env "TEMPORAL_ADDRESS" | default "127.0.0.1:7233" }}\nport: {{ env "TEMPORAL_UI_PORT" | default "8080" }}\n';

function child(host?: string) {
  const root = join(tempDir(), 'temporal-ui');
  const c = uiChild({ bin: '/bin/ui', root, template: TEMPLATE, logs: root, temporalAddress: '127.0.0.1:7333', port: 8433, host });
  return { root, spec: c.spec, listen: readFileSync(join(root, 'config/cluster.yaml'), 'utf8') };
}

describe('the Temporal UI of npm run cluster', () => {
  test('listens on 127.0.0.1 by default: the override file names it, the template is kept as it is', () => {
    expect(DEFAULT_UI_HOST).toBe('127.0.0.1');
    const { root, spec, listen } = child();
    expect(listen).toBe('host: "127.0.0.1"\n');
    expect(readFileSync(join(root, 'config/base.yaml'), 'utf8')).toBe(TEMPLATE);
    // base.yaml (the template) first, then cluster.yaml over it: the UI server's load order.
    expect(spec.argv).toEqual(['/bin/ui', '--root', root, '--env', 'cluster', 'start']);
    expect(spec.env).toMatchObject({ TEMPORAL_ADDRESS: '127.0.0.1:7333', TEMPORAL_UI_PORT: '8433' });
    expect(uiUrl(8433)).toBe('http://127.0.0.1:8433');
  });

  test('another address only when asked (uiHost; --ui-host=… on the command line); IPv6 in brackets', () => {
    expect(child('0.0.0.0').listen).toBe('host: "0.0.0.0"\n');
    expect(child('10.1.2.3').listen).toBe('host: "10.1.2.3"\n');
    expect(child('::1').listen).toBe('host: "[::1]"\n');
    expect(uiUrl(8433, '0.0.0.0')).toBe('http://127.0.0.1:8433');
    expect(uiUrl(8433, '::')).toBe('http://127.0.0.1:8433');
    expect(uiUrl(8433, '10.1.2.3')).toBe('http://10.1.2.3:8433');
    expect(uiUrl(8433, '::1')).toBe('http://[::1]:8433');
  });

  test("the launcher's TEMPORAL_AUTH_* settings (the UI server's OIDC sign-in) reach the UI, nothing else of its environment", () => {
    const env = {
      TEMPORAL_AUTH_ENABLED: 'true',
      TEMPORAL_AUTH_PROVIDER_URL: 'https://accounts.example',
      TEMPORAL_AUTH_CLIENT_ID: 'id',
      TEMPORAL_AUTH_CLIENT_SECRET: 'secret',
      TEMPORAL_AUTH_CALLBACK_URL: 'https://temporal.example/auth/sso/callback',
      CREDENTIALS_KEY: 'never',
      DATABASE_URL: 'never',
    };
    expect(uiAuthEnv(env)).toEqual({
      TEMPORAL_AUTH_ENABLED: 'true',
      TEMPORAL_AUTH_PROVIDER_URL: 'https://accounts.example',
      TEMPORAL_AUTH_CLIENT_ID: 'id',
      TEMPORAL_AUTH_CLIENT_SECRET: 'secret',
      TEMPORAL_AUTH_CALLBACK_URL: 'https://temporal.example/auth/sso/callback',
    });
    expect(Object.keys(child().spec.env)).not.toContain('CREDENTIALS_KEY');
  });
});
