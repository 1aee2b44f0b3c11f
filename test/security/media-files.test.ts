import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { useOperation } from '../helpers/operation.js';
import { fixture } from '../helpers/fixtures.js';
import { frameRgb } from '../helpers/media.js';
import {
  assertNoFileContains,
  assertStillServing,
  expectRefused,
  gifBomb,
  jpegBomb,
  literal,
  pngBomb,
  ready,
} from './hostile.js';

/**
 * Downloaded files that try to make ffmpeg read something else (playlists and lists naming local
 * files or URLs), pictures that declare enormous sizes, truncated and mislabelled media, and
 * inputs past the pixel and duration limits.
 */

const SECRET = `MEDIAFLOW-SECRET-${Math.random().toString(36).slice(2)}`;

/** `Input <url> <rest>`: the engine may name the input or, where the probe speaks, not yet. */
const input = (url: string, rest: string) => new RegExp(`^Input (${literal(url)} )?${literal(rest)}$`);
const REFERS = 'which refers to other files; only self-contained media files are accepted';

describe('hostile media files', () => {
  const op = useOperation({
    fixtures: [
      'tone-2s-44k-stereo.mp3',
      'tone-3s-44k-stereo.mp3',
      'clip-2s-640x360-25fps.mp4',
      'clip-1s-320x240-30fps-silent.mp4',
      'clip-2s-480x270-black.mp4',
      'small-300x200.png',
      'hello.srt',
      'not-media.txt',
    ],
  });
  const { serve } = op;
  let secretDir: string;

  before(async () => {
    secretDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-secret-'));
    await writeFile(path.join(secretDir, 'secret.txt'), `${SECRET}\n`);
    // A secret that is valid media, so a list that reached it would make a working output.
    await copyFile(await fixture('tone-3s-44k-stereo.mp3'), path.join(secretDir, 'secret.mp3'));
    await ready(op.server);
  });
  after(async () => {
    if (secretDir) await rm(secretDir, { recursive: true, force: true });
  });

  /** The playlists and lists, each naming the secret files in every way ffmpeg understands, and a URL. */
  function lists(): Array<{ name: string; type: string; text: string; reason: string }> {
    const mp3 = path.join(secretDir, 'secret.mp3');
    const txt = path.join(secretDir, 'secret.txt');
    const leak = op.files.url('/leak');
    return [
      {
        name: 'an HLS playlist',
        type: 'application/vnd.apple.mpegurl',
        text: [
          '#EXTM3U',
          '#EXT-X-VERSION:3',
          '#EXT-X-TARGETDURATION:3',
          '#EXT-X-MEDIA-SEQUENCE:0',
          '#EXTINF:3.0,',
          mp3,
          '#EXTINF:3.0,',
          `file://${txt}`,
          '#EXTINF:3.0,',
          `../../../../../..${txt}`,
          '#EXTINF:3.0,',
          leak,
          '#EXT-X-ENDLIST',
          '',
        ].join('\n'),
        reason: `is an HLS playlist, ${REFERS}`,
      },
      {
        name: 'an HLS playlist served as video/mp4 under a .mp4 name',
        type: 'video/mp4',
        text: ['#EXTM3U', '#EXT-X-TARGETDURATION:3', '#EXTINF:3.0,', mp3, '#EXT-X-ENDLIST', ''].join('\n'),
        reason: `is an HLS playlist, ${REFERS}`,
      },
      {
        name: 'an ffconcat list',
        type: 'text/plain',
        text: ['ffconcat version 1.0', `file '${mp3}'`, `file 'file:${txt}'`, `file '${leak}'`, ''].join('\n'),
        reason: `is a concat list, ${REFERS}`,
      },
      {
        name: 'a concat list without its header',
        type: 'audio/mpeg',
        text: `file '${mp3}'\nfile '${txt}'\n`,
        reason: `is a concat list, ${REFERS}`,
      },
      {
        name: 'a DASH manifest',
        type: 'application/dash+xml',
        text:
          `<?xml version="1.0" encoding="UTF-8"?>\n` +
          `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT3S" ` +
          `profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">` +
          `<BaseURL>file://${secretDir}/</BaseURL><Period><AdaptationSet mimeType="audio/mpeg">` +
          `<Representation id="1" bandwidth="128000"><BaseURL>secret.mp3</BaseURL></Representation>` +
          `</AdaptationSet></Period></MPD>\n`,
        reason: `is a DASH manifest, ${REFERS}`,
      },
    ];
  }

  it(
    'refuses playlists and concat lists that name local files or URLs, for every kind of input, and leaks ' + 'nothing',
    async () => {
      for (const list of lists()) {
        const name = list.name.includes('.mp4') ? 'clip.mp4' : `list-${list.name.length}.m3u8`;
        const url = serve(name, list.type, list.text);
        const good = op.files.url('/f/tone-2s-44k-stereo.mp3');
        const attempts: Array<[string, Record<string, string>]> = [
          ['/convert-video/', { video_url: url }],
          ['/merge-audios/', { audio_urls: `${good},${url}` }],
          ['/merge-audio-video/', { video_url: op.files.url('/f/clip-2s-640x360-25fps.mp4'), audio_url: url }],
          ['/convert_image_from_url/', { image_url: url, target_format: 'png' }],
          ['/add-subtitles/', { video_url: op.files.url('/f/clip-2s-480x270-black.mp4'), subtitle_url: url }],
        ];
        for (const [route, fields] of attempts) {
          await expectRefused(op.server, route, fields, { status: 422, error: input(url, list.reason) });
        }
      }
      assert.equal(op.files.hits.get('/leak'), undefined, 'a list made the server fetch a URL it named');
      await assertNoFileContains(op.server.dataDir, SECRET);
    },
  );

  it('refuses decompression-bomb pictures by their header, without decoding them', async () => {
    const bombs: Array<[string, string, Buffer, string]> = [
      ['png 100000x100000', 'image/png', pngBomb(100_000, 100_000), '100000x100000'],
      // Small enough for ffmpeg to try (225 Mpx, about 700 MB): only the header check stops it.
      ['png 15000x15000', 'image/png', pngBomb(15_000, 15_000), '15000x15000'],
      ['jpeg 60000x60000', 'image/jpeg', jpegBomb(60_000, 60_000), '60000x60000'],
      ['gif 65535x65535', 'image/gif', gifBomb(65_535, 65_535), '65535x65535'],
    ];
    for (const [name, type, data, size] of bombs) {
      assert.ok(data.length < 2048, `${name} is ${data.length} bytes`);
      const url = serve(`${name.replace(/\W+/g, '-')}.bin`, type, data);
      const error = `Input ${url} is ${size}, more than the limit of 100000000 pixels (MEDIAFLOW_MAX_PIXELS)`;
      await expectRefused(
        op.server,
        '/convert_image_from_url/',
        { image_url: url, target_format: 'png' },
        { status: 422, error },
      );
      await expectRefused(
        op.server,
        '/resize_image/',
        { image_url: url, width: '100', height: '100' },
        { status: 422, error },
      );
      await expectRefused(op.server, '/crop_image_to_short/', { image_url: url }, { status: 422, error });
      await expectRefused(
        op.server,
        '/images-to-video/',
        { image_urls: `${op.files.url('/f/small-300x200.png')},${url}` },
        { status: 422, error },
      );
    }
  });

  it('refuses an SVG that declares a huge canvas, which only decoding can size, without allocating it', async () => {
    const url = serve(
      'huge.svg',
      'image/svg+xml',
      '<svg xmlns="http://www.w3.org/2000/svg" width="15000" height="15000"><rect width="10" height="10"/></svg>\n',
    );
    await expectRefused(
      op.server,
      '/convert_image_from_url/',
      { image_url: url, target_format: 'png' },
      {
        status: 422,
        error: input(
          url,
          'has pictures that could not be decoded: their size is invalid or larger than the limit of ' +
            '100000000 pixels (MEDIAFLOW_MAX_PIXELS)',
        ),
      },
    );
  });

  it('renders an SVG without the local files it links to', async () => {
    const red = path.join(secretDir, 'red.png');
    await copyFile(await fixture('small-300x200.png'), red);
    const svg = [
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64">',
      '<rect width="64" height="64" fill="white"/>',
      `<image xlink:href="file://${red}" x="0" y="0" width="32" height="32"/>`,
      `<image href="${red}" x="32" y="32" width="32" height="32"/>`,
      '</svg>',
    ].join('');
    const res = await op.server.post('/convert_image_from_url/', {
      image_url: serve('links.svg', 'image/svg+xml', svg),
      target_format: 'png',
    });
    if (res.status === 200) {
      const frame = await frameRgb(op.server.pathOf(res.body.output_file!));
      for (const [x, y] of [
        [16, 16],
        [48, 48],
        [8, 24],
        [40, 56],
      ] as const)
        assert.deepEqual(frame.pixel(x, y), [255, 255, 255], `pixel ${x},${y} came from a linked file`);
    } else {
      assert.equal(res.status, 422, JSON.stringify(res.body));
    }
    await assertStillServing(op.server);
  });

  it('refuses truncated MP4s with a 422 and a short reason', async () => {
    const whole = await readFile(await fixture('clip-2s-640x360-25fps.mp4'));
    const cut = serve('cut.mp4', 'video/mp4', whole.subarray(0, Math.floor(whole.length * 0.6)));
    await expectRefused(
      op.server,
      '/convert-video/',
      { video_url: cut },
      { status: 422, error: input(cut, "is truncated: the file ends inside its 'mdat' box") },
    );
    // Cut inside the index at the front.
    const head = serve('head.mp4', 'video/mp4', whole.subarray(0, 1500));
    await expectRefused(
      op.server,
      '/convert-video/',
      { video_url: head },
      { status: 422, error: input(head, "is truncated: the file ends inside its 'moov' box") },
    );
    // Index at the end (no faststart): the cut removes it.
    const late = await readFile(await fixture('clip-1s-320x240-30fps-silent.mp4'));
    const noIndex = serve('no-index.mp4', 'video/mp4', late.subarray(0, Math.floor(late.length / 2)));
    await expectRefused(
      op.server,
      '/convert-video/',
      { video_url: noIndex },
      { status: 422, error: input(noIndex, "is truncated: the file ends inside its 'mdat' box") },
    );
  });

  it('refuses files that are not what the operation needs', async () => {
    const png = op.files.url('/f/small-300x200.png');
    const mp3 = op.files.url('/f/tone-2s-44k-stereo.mp3');
    const mp4 = op.files.url('/f/clip-2s-640x360-25fps.mp4');
    const text = op.files.url('/f/not-media.txt');
    await expectRefused(
      op.server,
      '/merge-audios/',
      { audio_urls: `${mp3},${png}` },
      { status: 422, error: /^Input .+ is not an audio file: found an image \((png_pipe|image2)\)$/ },
    );
    await expectRefused(
      op.server,
      '/merge-audios/',
      { audio_urls: `${mp3},${text}` },
      { status: 422, error: input(text, 'is not readable media (Invalid data found when processing input)') },
    );
    await expectRefused(
      op.server,
      '/convert-video/',
      { video_url: mp3 },
      { status: 422, error: `Input ${mp3} is not a video file: found mp3 with audio mp3` },
    );
    await expectRefused(
      op.server,
      '/convert-video/',
      { video_url: png },
      { status: 422, error: /^Input .+ is not a video file: found an image \((png_pipe|image2)\)$/ },
    );
    await expectRefused(
      op.server,
      '/convert_image_from_url/',
      { image_url: mp4, target_format: 'png' },
      { status: 422, error: `Input ${mp4} is not an image file: found mov with video h264 and audio aac` },
    );
    await expectRefused(
      op.server,
      '/add-subtitles/',
      { video_url: mp4, subtitle_url: mp3 },
      { status: 422, error: `Input ${mp3} is not a subtitle file: found mp3 with audio mp3` },
    );
  });
});

describe('pixel and duration limits', () => {
  const op = useOperation({
    fixtures: ['small-300x200.png', 'tone-2s-44k-stereo.mp3', 'tone-3s-44k-stereo.mp3', 'clip-2s-640x360-25fps.mp4'],
    env: { MEDIAFLOW_MAX_PIXELS: '50000', MEDIAFLOW_MAX_DURATION: '1' },
  });

  before(async () => {
    await ready(op.server);
  });

  it('refuses a picture over MEDIAFLOW_MAX_PIXELS', async () => {
    const png = op.files.url('/f/small-300x200.png');
    await expectRefused(
      op.server,
      '/resize_image/',
      { image_url: png, width: '10', height: '10' },
      {
        status: 422,
        error: `Input ${png} is 300x200, more than the limit of 50000 pixels (MEDIAFLOW_MAX_PIXELS)`,
      },
    );
    const mp4 = op.files.url('/f/clip-2s-640x360-25fps.mp4');
    await expectRefused(
      op.server,
      '/convert-video/',
      { video_url: mp4 },
      {
        status: 422,
        error: `Input ${mp4} is 640x360, more than the limit of 50000 pixels (MEDIAFLOW_MAX_PIXELS)`,
      },
    );
  });

  it('refuses media longer than MEDIAFLOW_MAX_DURATION', async () => {
    const a = op.files.url('/f/tone-2s-44k-stereo.mp3');
    const b = op.files.url('/f/tone-3s-44k-stereo.mp3');
    await expectRefused(
      op.server,
      '/merge-audios/',
      { audio_urls: `${a},${b}` },
      {
        status: 422,
        error: `Input ${a} lasts 2 s, more than the limit of 1 s (MEDIAFLOW_MAX_DURATION)`,
      },
    );
  });
});
