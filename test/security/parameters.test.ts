import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, it } from '../helpers/lifecycle.js';
import { useOperation } from '../helpers/operation.js';
import { fixture } from '../helpers/fixtures.js';
import { type Route } from '../helpers/file-server.js';
import { frameRgb, meanLuma, probe, videoOf } from '../helpers/media.js';
import { assertStillServing, expectRefused, ready } from './hostile.js';

/**
 * User strings that would break a command line, a filter graph or a file name if they reached
 * one: formats come from allowlists, numbers are parsed and range-checked, and downloaded files
 * get generated names, whatever their URL says.
 */
describe('hostile parameters', () => {
  /** Routes added while the server runs (it looks them up per request). */
  const routes: Record<string, Route> = {};
  const op = useOperation({
    fixtures: [
      'clip-2s-640x360-25fps.mp4',
      'clip-2s-480x270-black.mp4',
      'tone-2s-44k-stereo.mp3',
      'small-300x200.png',
      'hello.srt',
    ],
    routes,
  });

  before(async () => {
    await ready(op.server);
  });

  /** A value as a client sees it quoted back: a path of the server's disk by its last name, as in any message. */
  const shown = (format: string): string => format.replace('/etc/passwd', 'passwd');
  const HOSTILE_FORMATS = [
    'mp4 -i /etc/passwd',
    '../../x',
    'mp4;rm -rf /',
    'mp4\t-f\tnull',
    "mp4' -y '",
    'mp4:a',
    '../../../../var/www/x.mp4',
    'mp4%00',
    'mp4/../mov',
    'MP4 MOV',
  ];

  it('refuses format values outside the allowlist, naming the supported ones, and fetches nothing', async () => {
    const video = op.files.url('/f/clip-2s-640x360-25fps.mp4');
    const audio = op.files.url('/f/tone-2s-44k-stereo.mp3');
    const image = op.files.url('/f/small-300x200.png');
    const routesAndFields: Array<[string, Record<string, string>, string, string]> = [
      ['/convert-video/', { video_url: video }, 'format', 'mp4, mov, mkv, avi, webm'],
      ['/merge-audios/', { audio_urls: `${audio},${audio}` }, 'format', 'mp3, wav, aac, m4a, ogg, flac, opus'],
      [
        '/add-subtitles/',
        { video_url: video, subtitle_url: op.files.url('/f/hello.srt') },
        'format',
        'mp4, mov, mkv, avi, webm',
      ],
      ['/merge-audio-video/', { video_url: video, audio_url: audio }, 'format', 'mp4, mov, mkv, avi, webm'],
    ];
    op.files.hits.clear();
    for (const [route, fields, key, supported] of routesAndFields) {
      for (const format of HOSTILE_FORMATS) {
        await expectRefused(
          op.server,
          route,
          { ...fields, [key]: format },
          // The value comes back as a client may see any message: a path of the server's disk by its last name.
          {
            status: 400,
            error: `Unsupported format '${shown(format)}'. Supported formats: ${supported}.`,
          },
        );
      }
    }
    for (const format of HOSTILE_FORMATS) {
      await expectRefused(
        op.server,
        '/convert_image_from_url/',
        { image_url: image, target_format: format },
        {
          status: 400,
          error: `Unsupported format '${shown(format)}'. Supported formats: png, jpg, jpeg, webp, bmp, tiff, gif.`,
        },
      );
      await expectRefused(
        op.server,
        '/images-to-video/',
        { image_urls: image, format },
        { status: 400, error: `Unsupported format '${shown(format)}'. Supported formats: mp4, avi, mov, mkv, webm.` },
      );
    }
    assert.equal(op.files.hits.size, 0, 'an input was fetched for a request with an invalid parameter');
  });

  const NUMBERS: Array<[string, string]> = [
    ['-1', 'negative'],
    ['0', 'zero'],
    ['8193', 'just over the maximum'],
    ['99999999999999999999999999', 'huge'],
    ['1e309', 'infinite'],
    ['abc', 'not a number'],
    ['1.5', 'fractional'],
    ['0x10', 'hex'],
    ['1e3', 'exponent'],
    ['10px', 'with a unit'],
    ['NaN', 'NaN'],
    ['Infinity', 'Infinity'],
    ['-0', 'negative zero'],
    ['1,000', 'with a separator'],
    ['100; rm -rf /', 'with a command'],
    ['100:force_style=x', 'with a filter option'],
  ];

  it('refuses negative, zero, huge and non-numeric numbers with a 400 that names the parameter', async () => {
    const image = op.files.url('/f/small-300x200.png');
    op.files.hits.clear();
    for (const [value] of NUMBERS) {
      const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
      await expectRefused(
        op.server,
        '/resize_image/',
        { image_url: image, width: value, height: '100' },
        {
          status: 400,
          error: `Expected \`width\` to be an integer from 1 to 8192, got \`${shown}\``,
        },
      );
      await expectRefused(
        op.server,
        '/resize_image/',
        { image_url: image, width: '100', height: value },
        {
          status: 400,
          error: `Expected \`height\` to be an integer from 1 to 8192, got \`${shown}\``,
        },
      );
    }
    const others: Array<[string, Record<string, string>, string, string]> = [
      ['/images-to-video/', { image_urls: image }, 'seconds_per_image', 'from 1 to 3600'],
      ['/images-to-video/', { image_urls: image }, 'fps', 'from 1 to 60'],
      ['/images-to-video/', { image_urls: image }, 'width', 'from 16 to 7680'],
      ['/generate-subtitles/', { text: 'Hello there.' }, 'words_per_line', 'from 1 to 100'],
      ['/generate-subtitles/', { text: 'Hello there.' }, 'seconds_per_line', 'from 1 to 3600'],
    ];
    for (const [route, fields, key, range] of others) {
      for (const value of ['-5', '0', '99999999', 'ten', '2.5']) {
        await expectRefused(
          op.server,
          route,
          { ...fields, [key]: value },
          { status: 400, error: `Expected \`${key}\` to be an integer ${range}, got \`${value}\`` },
        );
      }
    }
    await expectRefused(
      op.server,
      '/resize_image/',
      { image_url: image, height: '100' },
      { status: 400, error: 'Missing required parameter `width`' },
    );
    assert.equal(op.files.hits.size, 0, 'an input was fetched for a request with an invalid number');
  });

  /** Subtitle URLs whose last path segment is hostile to a filter graph, a shell or a file system. */
  const SUBTITLE_NAMES = [
    'it\'s "quoted".srt',
    'a:b:c.srt',
    'back\\slash\\.srt',
    'new\nline.srt',
    "x';subtitles=filename='%2Fetc%2Fpasswd'[out];[in]null.srt",
    'comma,semi;colon:bracket[0].srt',
    '..%2F..%2Fetc%2Fpasswd.srt',
    "sub.s'r:t",
  ];

  it('burns subtitles whose URL names are full of quotes, colons, backslashes and newlines', async () => {
    const srt = await readFile(await fixture('hello.srt'));
    const video = op.files.url('/f/clip-2s-480x270-black.mp4');
    for (const name of SUBTITLE_NAMES) {
      const url = op.files.url(`/subs/${encodeURIComponent(name)}`);
      const key = new URL(url).pathname;
      routes[key] = (_req, res) => void res.writeHead(200, { 'content-type': 'application/x-subrip' }).end(srt);
      const res = await op.server.post('/add-subtitles/', { video_url: video, subtitle_url: url });
      assert.equal(res.status, 200, `${JSON.stringify(name)}: ${JSON.stringify(res.body)}`);
      assert.equal(op.files.hits.get(key), 1, `${JSON.stringify(name)} was not fetched`);
      const output = op.server.pathOf(res.body.output_video!);
      assert.match(output, /\/video_with_subtitles\.mp4$/);
      const info = await probe(output);
      assert.equal(videoOf(info)?.width, 480);
      // White text on a black picture: the bottom band is brighter than black only if the subtitles were drawn.
      const frame = await frameRgb(output, 1);
      assert.ok(meanLuma(frame, 0, 240, 480, 30) > 4, `${JSON.stringify(name)}: no subtitles drawn`);
      assert.ok(meanLuma(frame, 0, 0, 480, 200) < 1, 'the picture above the subtitles is not black');
      await assertStillServing(op.server);
    }
  });
});
