// The Python SDK (sdk/python) against the real service: pytest runs the SDK's own tests
// (sdk/python/tests) with the project's venv (.tools/python, made by scripts/setup.sh --test)
// while this process serves the app and runs the worker they need.
import { expect, test } from 'bun:test';
import { join, resolve } from 'node:path';
import { type SdkService, useSdkService } from './harness/sdk-service.ts';

const ROOT = resolve(import.meta.dir, '..');
const PYTHON = join(ROOT, '.tools', 'python', 'bin', 'python');

let service: SdkService;
useSdkService((s) => {
  service = s;
});

test('pytest: an upload and a post with its media, pages, a 429 retried after Retry-After, a real delivery verified', async () => {
  // An account per concern: the 429 test spends its key's whole minute.
  const accounts = {
    posts: await service.account(),
    async: await service.account(),
    rate: await service.account(),
    webhooks: await service.account(),
  };
  const pytest = Bun.spawn([PYTHON, '-m', 'pytest', 'sdk/python/tests', '-q', '-p', 'no:cacheprovider'], {
    cwd: ROOT,
    env: {
      ...process.env,
      POSTPILOT_TEST_BASE_URL: service.url,
      POSTPILOT_TEST_ACCOUNTS: JSON.stringify(accounts),
      PYTHONDONTWRITEBYTECODE: '1',
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  // Awaited, not waited on: this process keeps serving the requests pytest makes.
  const [code, out, err] = await Promise.all([pytest.exited, new Response(pytest.stdout).text(), new Response(pytest.stderr).text()]);
  if (code !== 0) console.error(`pytest exited ${code}:\n${out}\n${err}`);
  expect(code).toBe(0);
  // Every test ran: none skipped for want of the service.
  expect(out).toMatch(/\d+ passed/);
  expect(out).not.toMatch(/skipped/);
}, 120_000);
