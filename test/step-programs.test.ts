import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { eventually } from './helpers/serve-process.js';
import { isFinal, waitForJob } from './helpers/jobs.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { CONTRACT_VERSION, definePlugin, Optional, Param, Type, type Plan } from '../src/sdk.js';

/** Marks the programs this file starts in the process list. */
const MARK = 'mediaflow-step-program-test';

/**
 * A plugin whose step runs a Node program (StepContext.spawn) that prints two lines, then lives `seconds` more,
 * ignoring SIGTERM when `stubborn`; the step writes what it heard and answers it.
 */
const speaker = definePlugin({
  contract: CONTRACT_VERSION,
  name: 'speaker',
  path: '/speaker/',
  summary: 'Runs a program in a step and answers what it printed',
  params: Type.Object({
    seconds: Param.integer({ minimum: 0, maximum: 60, default: 0, description: 'How long the program lives on' }),
    stubborn: Param.boolean({ default: false, description: 'The program ignores SIGTERM' }),
    answer_as: Param.choice(['said', 'undeclared'], { default: 'said', description: 'The answer field' }),
    share: Optional(Param.number({ minimum: 0, maximum: 1, description: "A quick first stage's share" })),
  }),
  answers: Type.Object({ said: Type.String({ description: 'What the program printed' }) }),
  output: () => ({ field: 'output_file', path: '{id}/said.txt', alsoAs: ['said_file'] }),
  build: ({ params, output }) => {
    const speak: Plan = {
      commands: [],
      steps: [
        {
          label: `node: two lines -> ${output}`,
          run: async (context) => {
            const heard: string[] = [];
            const program =
              `${params.stubborn ? "process.on('SIGTERM', () => {});" : ''} console.log('hello'); ` +
              // The second line comes later than the 500 ms within which a job keeps one progress report.
              `setTimeout(() => { console.log('world'); setTimeout(() => {}, ${params.seconds * 1000}); }, 700); ` +
              `// ${MARK}`;
            const run = await context.spawn(process.execPath, ['-e', program], {
              onLine: (line) => {
                heard.push(line);
                context.progress(heard.length / 4);
              },
            });
            assert.equal(run.exitCode, 0);
            await import('node:fs/promises').then(({ writeFile }) => writeFile(context.path(output), heard.join(' ')));
            context.answer({ [params.answer_as]: heard.join(' ') });
          },
        },
      ],
    };
    if (params.share === undefined) return speak;
    return { commands: [], steps: [{ label: 'nothing', run: async () => {} }], share: params.share, next: () => speak };
  },
  message: () => 'Spoken',
});

/** Pids of this process's children running the marked program, from /proc. */
async function programs(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(MARK) && !cmdline.includes('vitest')) pids.push(Number(entry));
  }
  return pids;
}

describe('programs run by plan steps (StepContext.spawn)', () => {
  let server: TestServer;

  before(async () => {
    const registry = builtinRegistry();
    registry.register(speaker as never);
    server = await startMediaflow({ MEDIAFLOW_JOB_TIMEOUT: '3s' }, registry);
  });
  after(async () => {
    await server?.close();
  });

  it("hears the program's lines as they come, answers them, and answers the URL under both names", async () => {
    const res = await server.post('/speaker/', {});
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, {
      message: 'Spoken',
      output_file: res.body.output_file,
      said_file: res.body.output_file,
      said: 'hello world',
    });
    assert.equal(await (await fetch(res.body.output_file!)).text(), 'hello world');
  });

  it('fails the job (500) when a step answers a field the plugin does not declare', async () => {
    const res = await server.post('/speaker/', { answer_as: 'undeclared' });
    assert.equal(res.status, 500, JSON.stringify(res.body));
    assert.match(res.body.error!, /^Plugin 'speaker' failed: /);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it("moves the job's progress as the step reports it, within its stage's share", async () => {
    const submit = async (fields: Record<string, string>) => {
      const form = new FormData();
      for (const [key, value] of Object.entries(fields)) form.append(key, value);
      const res = await fetch(`${server.base}/speaker/`, {
        method: 'POST',
        body: form,
        headers: { prefer: 'respond-async' },
      });
      return ((await res.json()) as { job_id: string }).job_id;
    };
    // Two lines heard: half the step. Processing spans 10 to 96 % of a job's progress.
    const cases: Array<[Record<string, string>, number]> = [
      // A first stage of 0.2, then the step: 0.2 + 0.8 x 0.5 of the processing, 61 %.
      [{ seconds: '60', share: '0.2' }, 61],
      // A first stage of no share, and one stage alone: 0.5, 53 %.
      [{ seconds: '60', share: '0' }, 53],
      [{ seconds: '60' }, 53],
    ];
    for (const [fields, expected] of cases) {
      const id = await submit(fields);
      const job = await waitForJob(server.base, id, (seen) => seen.progress >= expected || isFinal(seen), {
        every: 20,
      });
      assert.equal(job.progress, expected, JSON.stringify([fields, job]));
      await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE' });
    }
    assert.ok(await eventually(async () => (await programs()).length === 0, 5000, 20));
  });

  it('kills a program that ignores SIGTERM with SIGKILL on cancel; the job ends once it has exited', async () => {
    const form = new FormData();
    for (const [key, value] of Object.entries({ seconds: '60', stubborn: 'true' })) form.append(key, value);
    const queued = await fetch(`${server.base}/speaker/`, {
      method: 'POST',
      body: form,
      headers: { prefer: 'respond-async' },
    });
    const { job_id: id } = (await queued.json()) as { job_id: string };
    assert.ok(await eventually(async () => (await programs()).length > 0, 10_000, 20), 'the program runs');
    const cancelled = await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE' });
    assert.equal(cancelled.status, 200);
    assert.ok(await eventually(async () => (await programs()).length === 0, 5000, 20), 'the program is gone');
    assert.ok(await eventually(async () => (await server.workLeftovers()).length === 0));
    const job = (await (await fetch(`${server.base}/jobs/${id}`)).json()) as { status: string };
    assert.equal(job.status, 'cancelled');
  });

  it('kills the program at the time limit: a 504 once it has exited (SIGKILL 2 s after SIGTERM)', async () => {
    const res = await server.post('/speaker/', { seconds: '60', stubborn: 'true' });
    assert.equal(res.status, 504, JSON.stringify(res.body));
    assert.equal(res.body.error, 'Processing ran past its time limit and was stopped');
    assert.deepEqual(await programs(), []);
    assert.deepEqual(await server.workLeftovers(), []);
  });
});
