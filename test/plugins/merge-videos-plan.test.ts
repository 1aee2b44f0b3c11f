import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from '../helpers/lifecycle.js';
import { fixture } from '../helpers/fixtures.js';
import { resolveBinaries } from '../../src/engine/exec/binaries.js';
import { inputArgs } from '../../src/engine/exec/input-policy.js';
import type { LocalInput, Plan } from '../../src/engine/contract/plugin.js';
import { probeFile } from '../../src/engine/probe/probe.js';
import mergeVideos from '../../src/plugins/merge-videos.js';

/** An input as the engine hands it to the builder: the fixture probed for real. */
async function probed(name: string, index: number): Promise<LocalInput> {
  const file = await fixture(name);
  const facts = await probeFile(resolveBinaries().ffprobe, path.basename(file), {
    cwd: path.dirname(file),
    timeoutMs: 30_000,
  });
  return { file: `in${index}.mp4`, source: name, facts };
}

const plan = (videos: LocalInput[]) =>
  mergeVideos.build({
    params: { video_urls: videos.map((v) => v.source).join(','), quality: 'balanced' },
    inputs: { video_urls: videos },
    output: 'output.mp4',
    outputs: ['output.mp4'],
    input: (v) => inputArgs(v, 'video'),
  }) as Plan;

describe('merge-videos plan', () => {
  it('joins inputs of one time base in one ffmpeg run, reading the inputs themselves', async () => {
    const a = await probed('clip-2s-640x360-25fps.mp4', 0);
    const b = await probed('clip-3s-640x360-25fps.mp4', 1);
    assert.equal(a.facts.video!.timeBase, b.facts.video!.timeBase);
    const { commands, files } = plan([a, b]);
    assert.equal(commands.length, 1);
    assert.equal(files!['videos.txt'], "file 'in0.mp4'\nfile 'in1.mp4'\n");
  });

  it("remuxes only the input whose time base differs, into the first one's timescale", async () => {
    const a = await probed('clip-2s-640x360-25fps.mp4', 0);
    const b = await probed('clip-3s-640x360-25fps-90k.mp4', 1);
    const c = await probed('clip-2s-640x360-25fps.mp4', 2);
    const { commands, files } = plan([a, b, c]);
    assert.equal(commands.length, 2);
    assert.ok(commands[0]!.includes('in1.mp4') && commands[0]!.at(-1) === 'part1.mov', commands[0]!.join(' '));
    assert.equal(commands[0]![commands[0]!.indexOf('-video_track_timescale') + 1], a.facts.video!.timeBase!.slice(2));
    assert.equal(files!['videos.txt'], "file 'in0.mp4'\nfile 'part1.mov'\nfile 'in2.mp4'\n");
  });

  it('remuxes an input that holds streams besides those joined', async () => {
    const a = await probed('clip-2s-640x360-25fps.mp4', 0);
    const b = await probed('clip-3s-640x360-25fps.mp4', 1);
    const withData = { ...b, facts: { ...b.facts, streamCount: 3 } };
    const { commands, files } = plan([a, withData]);
    assert.equal(commands.length, 2);
    assert.equal(files!['videos.txt'], "file 'in0.mp4'\nfile 'part1.mov'\n");
  });
});
