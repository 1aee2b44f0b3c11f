import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { before, describe, it } from '../helpers/lifecycle.js';
import { assertCode } from './hostile.js';
import { CASES } from './netns-cases.js';
import type { NetnsResult } from './netns-scenarios.js';

/**
 * The SSRF guard against every address that is not loopback: literal IPs in all notations, names
 * that resolve to private addresses, DNS rebinding, redirects and the allowlist. These cases name
 * addresses outside 127/8, so they run in a network namespace with nothing but loopback (see
 * netns-scenarios.ts); no packet can leave it even if the guard failed.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(import.meta.dirname, 'netns-scenarios.ts');
/** As root, new network and mount namespaces; otherwise inside a user namespace of our own. */
const UNSHARE = process.getuid?.() === 0 ? ['-n', '-m'] : ['-r', '-n', '-m'];

function namespacesAvailable(): boolean {
  try {
    execFileSync('unshare', [...UNSHARE, 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// Skipping hides a security check, so it must be asked for; otherwise a machine without namespaces fails here.
const skip = process.env.MEDIAFLOW_TEST_SKIP_NETNS === '1';

describe('SSRF guard, in a network namespace with only loopback', { skip } as never, () => {
  let output: { ipv6: boolean; queries: Record<string, number>; results: NetnsResult[] };
  const byName = new Map<string, NetnsResult>();

  before(async () => {
    assert.ok(
      namespacesAvailable(),
      `cannot create a network namespace with \`unshare ${UNSHARE.join(' ')}\`: run as root or with user ` +
        `namespaces, or set MEDIAFLOW_TEST_SKIP_NETNS=1 to skip these cases`,
    );
    const child = await execa('unshare', [...UNSHARE, process.execPath, '--import', 'tsx', SCRIPT], {
      cwd: ROOT,
      reject: false,
      timeout: 110_000,
      env: { TMPDIR: os.tmpdir() },
      extendEnv: true,
    });
    const line = String(child.stdout)
      .split('\n')
      .find((l) => l.startsWith('NETNS-RESULTS '));
    assert.ok(
      line,
      `the scenario script printed no results (exit ${child.exitCode}): ${String(child.stderr).slice(-2000)}`,
    );
    output = JSON.parse(line.slice('NETNS-RESULTS '.length)) as typeof output;
    for (const result of output.results) byName.set(result.name, result);
  }, 120_000);

  it('ran every scenario', () => {
    assert.deepEqual(
      output.results.map((r) => r.name),
      CASES.map((c) => c.name),
    );
  });

  it('looked up the rebinding name once: the connection went to the address that was checked', () => {
    assert.equal(output.queries['rebind.test A'], 1);
  });

  for (const testCase of CASES) {
    it(testCase.name, () => {
      const result = byName.get(testCase.name);
      assert.ok(result, 'no result');
      const { expect } = testCase;
      assert.equal(result.status, expect.status, JSON.stringify(result.body));
      if (expect.status === 200) {
        assert.equal(result.body.message, 'Image converted to png successfully.');
        assert.match(String(result.body.output_file), /\/uploads\/[0-9a-f-]{36}_converted\.png$/);
      } else if (expect.status === 202) {
        assert.deepEqual(Object.keys(result.body).sort(), ['job_id', 'status', 'status_url']);
        // One webhook at the public hook: the finished job, naming its hook.
        assert.equal(result.webhooks.length, 1, `webhooks received: ${result.webhooks.length}`);
        const job = JSON.parse(result.webhooks[0]!) as {
          job_id: unknown;
          status: string;
          error: unknown;
          result: { message: string; output_file: string };
          webhook: { url: string };
        };
        assert.equal(job.job_id, result.body.job_id);
        assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
        assert.equal(job.result.message, 'Image converted to png successfully.');
        assert.match(String(job.result.output_file), /\/uploads\/[0-9a-f-]{36}_converted\.png$/);
        assert.equal(job.webhook.url, testCase.webhook);
      } else {
        assert.deepEqual(Object.keys(result.body), ['error', 'code']);
        assertCode(result.body.code, expect);
        const error = String(result.body.error);
        if (typeof expect.error === 'string') assert.equal(error, expect.error);
        else if (expect.error) assert.match(error, expect.error);
        assert.ok(!error.includes(result.dataDir) && !error.includes(ROOT), `server path in ${error}`);
      }
      assert.equal(result.healthStatus, 200, 'the server still answers');
      assert.deepEqual(result.leftovers, [], 'files left in the work directory');
      assert.equal(
        result.publicHits.length,
        expect.publicHits ?? (expect.status === 200 && !expect.internalHits ? 1 : 0),
        `public hits: ${result.publicHits.join(', ')}`,
      );
      assert.equal(
        result.internalHits.length,
        expect.internalHits ?? 0,
        `requests reached private addresses: ${result.internalHits.join(', ')}`,
      );
      if (expect.status !== 202) assert.deepEqual(result.webhooks, [], 'a webhook was received');
    });
  }
});
