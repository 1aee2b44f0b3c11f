import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { fixture } from '../../helpers/fixtures.js';
import { FUGOOD, whisperCases, writeScriptedModel } from '../../helpers/whisper-model.js';
import { loadConfig } from '../../../src/engine/config.js';
import type { Engine } from '../../../src/engine/run/engine.js';
import { anyLocalPath } from '../../../src/engine/run/job-run.js';
import { coresEach } from '../../../src/engine/exec/slots.js';
import { LocalOutputStore } from '../../../src/engine/storage/storage.js';
import { builtinRegistry } from '../../../src/plugins/index.js';
import { cliServices } from '../../../src/runtime.js';

// Each engine keeps its own speech, libvips and text-worker settings: two of them in one process, both made before
// either runs a job, must not take each other's (as they did when the last engine made set them for the process).
describe('two engines in one process', () => {
  const { skipped } = whisperCases('two-engine');
  let scratch: string;
  const engines: Record<'one' | 'two', { engine: Engine; concurrency: number }> = {} as never;

  before(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-two-engines-'));
    const made = (name: 'one' | 'two', concurrency: number) => {
      const dir = path.join(scratch, name);
      const config = loadConfig({
        ...FUGOOD,
        MEDIAFLOW_DATA_DIR: dir,
        MEDIAFLOW_CONCURRENCY: String(concurrency),
        MEDIAFLOW_WHISPER_MODEL: path.join(scratch, `${name}.bin`),
      });
      const { engine } = cliServices({
        config,
        registry: builtinRegistry(),
        store: new LocalOutputStore(path.join(dir, 'out')),
        workRoot: path.join(dir, 'work'),
      });
      engines[name] = { engine, concurrency };
    };
    await writeScriptedModel(path.join(scratch, 'one.bin'), { segments: [{ start: 0, end: 1, text: 'First one.' }] });
    await writeScriptedModel(path.join(scratch, 'two.bin'), { segments: [{ start: 0, end: 1, text: 'Second one.' }] });
    made('one', 1);
    made('two', 2);
  }, 120_000);
  after(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('recognise speech each with its own model, at the same time', async (context) => {
    if (skipped(context)) return;
    const audio = await fixture('tone-2s-44k-stereo.mp3');
    const heard = await Promise.all(
      (['one', 'two'] as const).map(async (name) => {
        const result = await engines[name].engine.run(
          'transcribe',
          { media_url: audio, format: 'txt' },
          { localFiles: anyLocalPath },
        );
        return result.answers?.text;
      }),
    );
    assert.deepEqual(heard, ['First one.', 'Second one.']);
  });

  it("give libvips each its own threads: its job slot's share of the cores", async () => {
    const image = await fixture('small-300x200.png');
    for (const { engine, concurrency } of Object.values(engines)) {
      await engine.run('resize_image', { image_url: image, width: '30', height: '20' }, { localFiles: anyLocalPath });
      assert.equal(sharp.concurrency(), coresEach(concurrency), `with ${concurrency} slot(s)`);
    }
  });
});
