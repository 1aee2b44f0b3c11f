import assert from 'node:assert/strict';
import path from 'node:path';
import { execa } from 'execa';
import { describe, it } from '../../helpers/lifecycle.js';
import { withFileLimit } from '../../helpers/serve-process.js';

const SCENARIO = path.resolve(import.meta.dirname, 'out-of-descriptors.ts');

describe('programs started out of file descriptors', () => {
  it('fail the one run with a 503 (EMFILE), the process runs on, and they start once descriptors free up', async () => {
    const [command, ...prefix] = [...withFileLimit(128), process.execPath];
    const child = await execa(command!, [...prefix, '--import', 'tsx', SCENARIO], { reject: false, timeout: 60_000 });
    assert.equal(child.exitCode, 0, `the process ended on its own: ${child.stderr.slice(-2000)}`);
    const report = JSON.parse(child.stdout) as {
      held: number;
      exhausted: Record<string, { code?: string; status?: number; message?: string; value?: string }>;
      recovered: Record<string, { value?: string; message?: string }>;
    };
    assert.ok(report.held > 0, 'the scenario took the descriptors left');
    for (const name of ['ffprobe', 'ffmpeg', 'step'] as const) {
      const failed = report.exhausted[name]!;
      assert.equal(failed.code, 'MF_ERR_BUSY', `${name}: ${JSON.stringify(failed)}`);
      assert.equal(failed.status, 503);
      assert.match(
        String(failed.message),
        /^The server cannot start ff(probe|mpeg) now \(EMFILE: too many open files or processes\); retry later$/,
      );
    }
    // /health's version line: unknown for now, not a crash.
    assert.deepEqual(report.exhausted.version, { value: 'unknown' });
    assert.match(String(report.recovered.ffprobe!.value), /^ffprobe version/);
    assert.equal(report.recovered.ffmpeg!.value, '');
    assert.equal(report.recovered.step!.value, 'ok');
    assert.match(String(report.recovered.version!.value), /^ffprobe version/);
  });
});
