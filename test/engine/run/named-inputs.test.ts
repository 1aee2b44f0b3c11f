import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import { MediaflowError } from '../../../src/engine/errors.js';
import { callPlugin, checkedInputs } from '../../../src/engine/run/plugin-call.js';
import { CONTRACT_VERSION, Param, Type, type PluginDefinition } from '../../../src/engine/contract/plugin.js';

const plugin = {
  contract: CONTRACT_VERSION,
  name: 'probe-me',
  path: '/probe-me/',
  summary: 'A plugin whose inputs() is checked',
  params: Type.Object({ video_url: Param.url('video', 'A video') }),
  output: () => ({ field: 'output_file', path: '{id}.mp4' }),
  build: () => [],
  message: () => 'Done',
} as unknown as PluginDefinition;

/** What the engine makes of what inputs() returned. */
const named = (value: unknown) => callPlugin(plugin, 'inputs', () => checkedInputs(plugin, value));

describe("a plugin's named inputs", () => {
  it('are taken as they are when each is { name, source, kind } of a name of its own', () => {
    const inputs = [
      { name: 'media_1', source: 'https://example.com/a.jpg', kind: 'image' },
      { name: 'media_2', source: 'clip.mp4', kind: 'video' },
      { name: 'speech_1', source: 'the speech', kind: 'audio', speak: { text: 'Hi.', voice: 'flite:slt', at: 'x' } },
    ];
    assert.deepEqual(named(inputs), inputs);
    assert.deepEqual(named([]), []);
  });

  it('fail the job with a 500 naming the plugin when they are anything else', () => {
    for (const [value, problem] of [
      [{ name: 'x' }, 'something other than a list of { name, source, kind }'],
      [[{ name: 'a', source: 'b', kind: 'hologram' }], 'an input that is not { name, source, kind }'],
      [[null], 'an input that is not { name, source, kind }'],
      [
        [{ name: 'a', source: 'b', kind: 'video', speak: { text: 'Hi.', at: 'x' } }],
        "a speech input 'a' that is not { text, at, voice?, speed? } of kind audio",
      ],
      [
        [{ name: 'a', source: 'b', kind: 'audio', speak: { text: 'Hi.', speed: '2', at: 'x' } }],
        "a speech input 'a' that is not",
      ],
      [
        [
          { name: 'a', source: 'b', kind: 'audio' },
          { name: 'a', source: 'c', kind: 'audio' },
        ],
        "the name 'a' twice, or the name of a URL parameter",
      ],
      [
        [{ name: 'video_url', source: 'c', kind: 'video' }],
        "the name 'video_url' twice, or the name of a URL parameter",
      ],
    ] as const) {
      assert.throws(
        () => named(value),
        (error: MediaflowError) =>
          error.status === 500 &&
          error.message.startsWith("Plugin 'probe-me' failed: inputs() returned ") &&
          error.message.includes(problem),
        JSON.stringify(value),
      );
    }
  });
});
