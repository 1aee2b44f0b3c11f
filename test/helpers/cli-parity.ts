import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './mediaflow.js';

/**
 * Runs an operation's command as a user does (the real CLI, into a fresh --out-dir) and checks that it answers as
 * the HTTP route does: exit 0, the route's JSON on stdout with its `message`, and an `output_file` in the folder
 * that matches `output`, which `check` then looks into (with the whole answer). `refused`, run next into the same
 * folder, must exit with `exitCode` (2, a bad request, unless given) naming what is wrong on stderr, and write
 * nothing there.
 */
export async function assertCliParity(spec: {
  /** The command and its flags, without --out-dir. */
  args: string[];
  message: string;
  output: RegExp;
  check: (file: string, body: Record<string, unknown>) => Promise<void>;
  refused?: { args: string[]; stderr: RegExp; exitCode?: number };
}): Promise<void> {
  const out = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-'));
  try {
    const result = await runCli([...spec.args, '--out-dir', out]);
    assert.equal(result.exitCode, 0, result.stderr);
    const body = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.equal(body.message, spec.message);
    const file = body.output_file as string;
    assert.ok(file.startsWith(`${out}${path.sep}`), `${file} is in --out-dir`);
    assert.match(file, spec.output);
    await spec.check(file, body);
    if (!spec.refused) return;
    const before = await readdir(out, { recursive: true });
    const bad = await runCli([...spec.refused.args, '--out-dir', out]);
    assert.equal(bad.exitCode, spec.refused.exitCode ?? 2, bad.stderr);
    assert.match(bad.stderr, spec.refused.stderr);
    assert.deepEqual(await readdir(out, { recursive: true }), before, 'a refused run writes nothing');
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}
