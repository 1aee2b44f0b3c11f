/**
 * The builder is a pure function from params and probed facts to an ffmpeg argv: it is tested
 * here without ffmpeg, without a server, in milliseconds.
 */
import assert from 'node:assert/strict';
import type { BuildContext, LocalInput } from 'mediaflow';
import { describe, it } from 'vitest';
import plugin, { toSeconds } from '../index.js';

type Params = Parameters<typeof plugin.build>[0]['params'];

/** A build context as mediaflow makes it, for one probed 3 s video. */
function context(params: Partial<Params>): BuildContext<Params> {
  const video: LocalInput = {
    file: 'in0.mp4',
    source: 'https://example.com/clip.mp4',
    facts: {
      formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
      duration: 3,
      isImage: false,
      video: { codec: 'h264', width: 320, height: 240, fps: 25, pixFmt: 'yuv420p' },
    },
  };
  const output = `output.${params.format ?? 'jpg'}`;
  return {
    params: { video_url: video.source, time: '0', format: 'jpg', ...params },
    inputs: { video_url: [video] },
    output,
    outputs: [output],
    input: (input) => ['-f', 'mov', '-i', input.file],
  };
}

describe('thumbnail build', () => {
  it('reads time codes as seconds', () => {
    assert.deepEqual(['12.5', '01:02.5', '00:01:02.5', '1:00:00'].map(toSeconds), [12.5, 62.5, 62.5, 3600]);
  });

  it('seeks before the input, writes one frame, and scales only when asked', () => {
    assert.deepEqual(plugin.build(context({ time: '00:00:01.5', format: 'png', width: 64 })), [
      ...['-ss', '1.5', '-f', 'mov', '-i', 'in0.mp4', '-map', '0:v:0', '-frames:v', '1'],
      ...[
        '-vf',
        'scale=64:-2:flags=lanczos,setsar=1',
        '-c:v',
        'png',
        '-pix_fmt',
        'rgb24',
        '-update',
        '1',
        '-f',
        'image2',
        'output.png',
      ],
    ]);
    const argv = plugin.build(context({})) as string[];
    assert.equal(argv[argv.indexOf('-vf') + 1], 'scale=trunc(iw*sar/2)*2:trunc(ih/2)*2,setsar=1');
  });

  it('refuses a time past the end of the video with a 422', () => {
    assert.throws(
      () => plugin.check!(context({ time: '3' })),
      (error: Error & { status?: number }) => {
        assert.equal(error.message, 'Time 3 is past the end of the video (3.00 s)');
        assert.equal(error.status, 422);
        return true;
      },
    );
    assert.doesNotThrow(() => plugin.check!(context({ time: '2.96' })));
  });

  it('names its output after the job id and the format', () => {
    assert.deepEqual(plugin.output({ video_url: 'x', time: '0', format: 'webp' }), {
      field: 'output_file',
      path: '{id}_thumbnail.webp',
    });
  });
});
