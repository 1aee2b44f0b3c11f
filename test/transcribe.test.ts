import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile, copyFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { getJob, isFinal, submitJob, waitForJob } from './helpers/jobs.js';
import { runCli } from './helpers/mediaflow.js';
import { claimMp3Seconds } from './helpers/media.js';
import { eventually, ffmpegChildren, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import {
  bindingMissing,
  HELLO_SCRIPT,
  writeRandomModel,
  writeScriptedModel,
  FUGOOD,
  whisperCases,
} from './helpers/whisper-model.js';
import { type BindingName, installCommand } from '../src/engine/speech/bindings/choice.js';

const HIDE_BINDING = path.resolve(import.meta.dirname, 'helpers/hide-whisper-binding.cjs');
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}';

const SCRIPT = HELLO_SCRIPT;

// The exact cases below are @fugood's whisper.cpp, pinned (FUGOOD); 'a faster binding' asserts napi's own answers.

const SRT = [
  '1',
  '00:00:00,000 --> 00:00:02,000',
  'Hello world.',
  '',
  '2',
  '00:00:02,500 --> 00:00:05,000',
  'This is mediaflow.',
  '',
].join('\n');

const VTT = [
  'WEBVTT',
  '',
  '00:00:00.000 --> 00:00:02.000',
  'Hello world.',
  '',
  '00:00:02.500 --> 00:00:05.000',
  'This is mediaflow.',
  '',
].join('\n');

const JSON_TRANSCRIPT = {
  language: 'en',
  text: 'Hello world. This is mediaflow.',
  segments: [
    {
      start: 0,
      end: 2,
      text: 'Hello world.',
      words: [
        { start: 0, end: 1, word: 'Hello' },
        { start: 1, end: 2, word: 'world.' },
      ],
    },
    {
      start: 2.5,
      end: 5,
      text: 'This is mediaflow.',
      words: [
        { start: 2.5, end: 3.34, word: 'This' },
        { start: 3.34, end: 4.16, word: 'is' },
        { start: 4.16, end: 5, word: 'mediaflow.' },
      ],
    },
  ],
};

/** The same on @napi-rs/whisper's whisper.cpp 1.7.2 (see FUGOOD). */
const NAPI_TRANSCRIPT = {
  language: 'en',
  text: 'Hello world. This is mediaflow. Hello world.',
  segments: [
    JSON_TRANSCRIPT.segments[0],
    {
      start: 2,
      end: 5,
      text: 'This is mediaflow.',
      words: [
        { start: 2, end: 3.34, word: 'This' },
        { start: 3.34, end: 4.16, word: 'is' },
        { start: 4.16, end: 5, word: 'mediaflow.' },
      ],
    },
    {
      start: 5,
      end: 7,
      text: 'Hello world.',
      words: [
        { start: 5, end: 6, word: 'Hello' },
        { start: 6, end: 7, word: 'world.' },
      ],
    },
  ],
};

/** Chinese, Arabic and Thai: words of scripts without spaces, and of one written right to left. */
const SCRIPTS = [
  { start: 0, end: 2, text: '你好，世界。' },
  { start: 2.5, end: 4, text: 'مرحبا بالعالم.' },
  { start: 4.5, end: 6, text: 'สวัสดี ชาวโลก' },
];

/** The 501's message when a binding is missing. */
const notInstalled = (binding: BindingName) =>
  `Transcription is not available on this server: whisper.cpp's binding is not installed (${installCommand(binding)})`;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function post(base: string, route: string, fields: Record<string, string>): Promise<Answer> {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  const res = await fetch(`${base}${route}`, { method: 'POST', body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Pids of the recogniser's children (`whisper-child.js`) that `parent` started, from /proc. */
async function whisperChildren(parent: number): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const ppid = Number(/^\d+ \(.*\) \S+ (\d+)/s.exec(stat)?.[1]);
    if (ppid === parent && cmdline.includes('whisper-child')) pids.push(Number(entry));
  }
  return pids;
}

/** The files under a data directory's work and uploads folders. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => []);
  return entries.map(String);
}

/** The offset of a ggml model's first tensor: its header, mel filters and vocabulary come before. */
function firstTensorAt(model: Buffer): number {
  let at = 48;
  const int = () => {
    at += 4;
    return model.readInt32LE(at - 4);
  };
  const filters = int() * int();
  at += 4 * filters;
  const tokens = int();
  for (let i = 0; i < tokens; i++) {
    const length = int();
    at += length;
  }
  return at;
}

describe('transcribe: speech to captions with whisper.cpp (generated models)', () => {
  const { missing, skipped } = whisperCases('transcribe');
  let dir: string;
  let files: FileServer;
  let server: ServeProcess;
  let dataDir: string;
  const file = (name: string) => path.join(dir, name);
  const servers: ServeProcess[] = [];

  /** A `mediaflow serve` with these settings, stopped after the file. */
  const serve = async (env: Record<string, string>) => {
    const data = await mkdtemp(path.join(dir, 'data-'));
    const started = await startServeProcess(data, { ...FUGOOD, ...env });
    servers.push(started);
    return { ...started, dataDir: data };
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-transcribe-'));
    if (missing) return;
    await writeScriptedModel(file('scripted.bin'), { segments: SCRIPT });
    await writeScriptedModel(file('multilingual.bin'), { multilingual: true, language: 2, segments: [SCRIPT[0]!] });
    await writeScriptedModel(file('scripts.bin'), { multilingual: true, language: 1, segments: SCRIPTS });
    await writeScriptedModel(file('sentences.bin'), {
      segments: [
        { start: 0, end: 3, text: 'One two three four five.' },
        { start: 3.5, end: 5, text: 'Six seven.' },
      ],
    });
    // prettier-ignore
    const tone = (seconds: number) => ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}:sample_rate=16000`];
    await execa('ffmpeg', ['-v', 'error', ...tone(8), '-c:a', 'libmp3lame', file('tone-8s.mp3')]);
    await execa('ffmpeg', ['-v', 'error', ...tone(61), '-c:a', 'pcm_s16le', file('tone-61s.wav')]);
    await execa('ffmpeg', ['-v', 'error', ...tone(65), '-c:a', 'pcm_s16le', file('tone-65s.wav')]);
    // prettier-ignore
    await execa('ffmpeg', [
      '-v', 'error', '-f', 'lavfi', '-i', 'color=c=black:s=320x240:r=25:d=8', ...tone(8),
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', file('talk.mp4'),
    ]);
    // prettier-ignore
    await execa('ffmpeg', [
      '-v', 'error', '-f', 'lavfi', '-i', 'color=c=black:s=320x240:r=25:d=2',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', file('silent.mp4'),
    ]);
    files = await startFileServer({
      '/silent.mp4': serveFile(file('silent.mp4'), 'video/mp4'),
      '/tone-8s.mp3': serveFile(file('tone-8s.mp3'), 'audio/mpeg'),
      '/tone-61s.wav': serveFile(file('tone-61s.wav'), 'audio/wav'),
      '/tone-65s.wav': serveFile(file('tone-65s.wav'), 'audio/wav'),
      // Written by the @napi-rs/whisper cancel case, the only one that needs it.
      '/tone-600s.wav': serveFile(file('tone-600s.wav'), 'audio/wav'),
      '/talk.mp4': serveFile(file('talk.mp4'), 'video/mp4'),
    });
    const pipelines = file('pipelines');
    await mkdir(pipelines);
    await writeFile(
      path.join(pipelines, 'captioned.yaml'),
      [
        'name: captioned',
        'description: A video with the captions of its own speech burned in.',
        'inputs:',
        '  video:',
        '    type: url',
        '    description: The video',
        'steps:',
        '  captions:',
        '    op: transcribe',
        '    with:',
        '      media_url: "{{ inputs.video }}"',
        '  captioned:',
        '    op: add-subtitles',
        '    with:',
        '      video_url: "{{ inputs.video }}"',
        '      subtitle_url: "{{ steps.captions.output }}"',
        'results:',
        '  captioned: "{{ steps.captioned.output }}"',
        '',
      ].join('\n'),
    );
    const main = await serve({ MEDIAFLOW_WHISPER_MODEL: file('scripted.bin'), MEDIAFLOW_PIPELINES_DIR: pipelines });
    server = main;
    dataDir = main.dataDir;
  });
  after(async () => {
    for (const started of servers) {
      started.child.kill('SIGTERM');
      await started.child;
    }
    await files?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Transcribes over HTTP (synchronously) with the scripted model; returns the answer and the output's text. */
  const transcribe = async (fields: Record<string, string>) => {
    const res = await post(server.base, '/transcribe/', { media_url: files.url('/tone-8s.mp3'), ...fields });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const url = res.body.output_file as string;
    const content = await (await fetch(url)).text();
    return { body: res.body, url, content };
  };

  it('answers the transcript as SRT by default: the text, the language and the URL twice', async (context) => {
    if (skipped(context)) return;
    const { body, url, content } = await transcribe({});
    assert.match(url, new RegExp(`^${server.base}/uploads/${UUID}/transcript\\.srt$`));
    assert.deepEqual(body, {
      message: 'Transcription completed successfully',
      output_file: url,
      subtitle_file_url: url,
      text: 'Hello world. This is mediaflow.',
      language: 'en',
    });
    assert.equal(content, SRT);
  });

  it('writes every format exactly: srt, vtt, txt and json (segments and words in seconds)', async (context) => {
    if (skipped(context)) return;
    assert.equal((await transcribe({ format: 'vtt' })).content, VTT);
    assert.equal((await transcribe({ format: 'txt' })).content, 'Hello world.\nThis is mediaflow.\n');
    const json = await transcribe({ format: 'json' });
    assert.match(json.url, /\/transcript\.json$/);
    assert.deepEqual(JSON.parse(json.content), JSON_TRANSCRIPT);
  });

  it('writes ASS with the caption style, each word highlighted from its own start to the next', async (context) => {
    if (skipped(context)) return;
    const plain = await transcribe({ format: 'ass', font_size: '80', color: '#00FF00', position: 'top' });
    assert.match(
      plain.content,
      /^Style: Default,Arial,80,&H0000FF00,&H0000FF00,&H00000000,&H00000000,.*,8,40,40,40,0$/m,
    );
    assert.deepEqual(
      plain.content.split('\n').filter((line) => line.startsWith('Dialogue:')),
      [
        'Dialogue: 0,0:00:00.00,0:00:02.00,Default,,0,0,0,,Hello world.',
        'Dialogue: 0,0:00:02.50,0:00:05.00,Default,,0,0,0,,This is mediaflow.',
      ],
    );
    const lit = await transcribe({ format: 'ass', highlight: 'word', highlight_color: '#FF0000' });
    const on = '\\1c&H0000FF&';
    const off = '\\1c&HFFFFFF&';
    // This 2.50-3.34, is 3.34-4.16, mediaflow. 4.16-5.00: \k in centiseconds, the colour back at each word's end.
    assert.deepEqual(
      lit.content.split('\n').filter((line) => line.startsWith('Dialogue:')),
      [
        `Dialogue: 0,0:00:00.00,0:00:02.00,Default,,0,0,0,,{\\k100${on}\\t(1000,1000,${off})}Hello ` +
          `{\\k100${on}\\t(2000,2000,${off})}world.`,
        `Dialogue: 0,0:00:02.50,0:00:05.00,Default,,0,0,0,,{\\k84${on}\\t(840,840,${off})}This ` +
          `{\\k82${on}\\t(1660,1660,${off})}is {\\k84${on}\\t(2500,2500,${off})}mediaflow.`,
      ],
    );
  });

  it('takes a video with sound, and a urlencoded or JSON body as well as a form', async (context) => {
    if (skipped(context)) return;
    const fields = { media_url: files.url('/talk.mp4'), format: 'txt' };
    const bodies: Array<[string, string]> = [
      ['application/x-www-form-urlencoded', new URLSearchParams(fields).toString()],
      ['application/json', JSON.stringify(fields)],
    ];
    for (const [type, body] of bodies) {
      const res = await fetch(`${server.base}/transcribe/`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      });
      const answer = (await res.json()) as Record<string, string>;
      assert.equal(res.status, 200, JSON.stringify(answer));
      assert.equal(answer.text, 'Hello world. This is mediaflow.');
      assert.equal(await (await fetch(answer.output_file!)).text(), 'Hello world.\nThis is mediaflow.\n');
    }
  });

  it('runs as an asynchronous job, and in a pipeline that burns the captions in', async (context) => {
    if (skipped(context)) return;
    const id = await submitJob(
      server.base,
      '/transcribe/',
      { media_url: files.url('/tone-8s.mp3') },
      {
        Prefer: 'respond-async',
      },
    );
    const job = await waitForJob(server.base, id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const result = job.result as Record<string, string>;
    assert.equal(result.text, 'Hello world. This is mediaflow.');
    assert.equal(result.language, 'en');
    assert.equal(result.subtitle_file_url, result.output_file);
    assert.equal(await (await fetch(result.output_file!)).text(), SRT);

    const run = await post(server.base, '/pipelines/captioned/', { video: files.url('/talk.mp4') });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const answers = run.body.answers as Record<string, Record<string, string>>;
    assert.deepEqual(answers.captions, { text: 'Hello world. This is mediaflow.', language: 'en' });
    const outputs = run.body.outputs as Record<string, string>;
    const video = await (await fetch(outputs.captioned!)).arrayBuffer();
    assert.ok(video.byteLength > 1000, 'the captioned video');
  });

  it('refuses bad requests with the status and a message that says why, leaving nothing', async (context) => {
    if (skipped(context)) return;
    const media_url = files.url('/tone-8s.mp3');
    const cases: Array<[Record<string, string>, number, RegExp]> = [
      [
        { media_url, format: 'docx' },
        400,
        /^Unsupported format 'docx'\. Supported formats: srt, vtt, ass, txt, json\.$/,
      ],
      [{ media_url, language: 'fr' }, 400, /whisper model is English-only: `language` must be en or auto, not fr/],
      [{ media_url, language: 'xx' }, 400, /`language`/],
      [{ media_url, highlight: 'word' }, 400, /Expected `format` to be ass when `highlight` is given/],
      [{ media_url, words_per_line: '0' }, 400, /words_per_line/],
      [{ media_url: files.url('/silent.mp4') }, 422, /has no audio stream: there is no speech/],
    ];
    for (const [fields, status, message] of cases) {
      const res = await post(server.base, '/transcribe/', fields);
      assert.equal(res.status, status, JSON.stringify([fields, res.body]));
      assert.match(res.body.error as string, message);
    }
    // language=auto on an English-only model is English.
    assert.equal((await transcribe({ language: 'auto' })).body.language, 'en');
    assert.deepEqual(await filesUnder(path.join(dataDir, 'work')), []);
  });

  it('says on /health that transcription is available, with the model file name', async (context) => {
    if (skipped(context)) return;
    const health = (await (await fetch(`${server.base}/health`)).json()) as Record<string, unknown>;
    assert.deepEqual(health.transcription, { available: true, model: 'scripted.bin', binding: 'fugood' });
  });

  it('from the CLI on a local file: times clamped to a 61 s input, where whisper.cpp ends at 62 s', async (context) => {
    if (skipped(context)) return;
    const out = await mkdtemp(path.join(dir, 'cli-'));
    const result = await runCli(
      ['transcribe', '--media-url', file('tone-61s.wav'), '--format', 'json', '--out-dir', out],
      { env: { ...FUGOOD, MEDIAFLOW_WHISPER_MODEL: file('scripted.bin') } },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const answer = JSON.parse(result.stdout) as Record<string, string>;
    assert.equal(answer.message, 'Transcription completed successfully');
    const transcript = JSON.parse(
      await readFile(path.resolve(out, answer.output_file!), 'utf8'),
    ) as typeof JSON_TRANSCRIPT;
    // The script again at 30 s and at 60 s; the last segment, 60-62 s, ends at the input's end.
    assert.deepEqual(
      transcript.segments.map((s) => [s.start, s.end, s.text]),
      [
        [0, 2, 'Hello world.'],
        [2.5, 5, 'This is mediaflow.'],
        [30, 32, 'Hello world.'],
        [32.5, 35, 'This is mediaflow.'],
        [60, 61, 'Hello world.'],
      ],
    );
    assert.deepEqual(transcript.segments.at(-1)!.words, [
      { start: 60, end: 61, word: 'Hello' },
      { start: 61, end: 61, word: 'world.' },
    ]);
  });

  it('decodes a lying MP3 no further than the cap: one window, not its real 65 s (issue 33)', async (context) => {
    if (skipped(context)) return;
    // Its Xing header claims 0.43 s; its frames run 65 s, three of whisper.cpp's 30 s windows.
    const lying = file('lying-65s.mp3');
    const tone = 'sine=frequency=440:duration=65:sample_rate=44100';
    await execa('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', tone, '-c:a', 'libmp3lame', lying]);
    await claimMp3Seconds(lying, 0.43);
    const served = await startFileServer({ '/lying.mp3': serveFile(lying, 'audio/mpeg') });
    try {
      const res = await post(server.base, '/transcribe/', { media_url: served.url('/lying.mp3'), format: 'txt' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      // The scripted model says its script once a window: decoded to its end, the sound said it three times.
      assert.equal(res.body.text, 'Hello world. This is mediaflow.');
    } finally {
      await served.close();
    }
  });

  it('breaks lines after words_per_line words and at the end of each sentence', async (context) => {
    if (skipped(context)) return;
    const lines = async (perLine: string) => {
      const out = await mkdtemp(path.join(dir, 'cli-'));
      const result = await runCli(
        ['transcribe', '--media-url', file('tone-8s.mp3'), '--format', 'json', '--words-per-line', perLine],
        { cwd: out, env: { ...FUGOOD, MEDIAFLOW_WHISPER_MODEL: file('sentences.bin') } },
      );
      assert.equal(result.exitCode, 0, result.stderr);
      const answer = JSON.parse(result.stdout) as Record<string, string>;
      const transcript = JSON.parse(await readFile(path.resolve(out, answer.output_file!), 'utf8')) as {
        segments: Array<{ start: number; end: number; text: string }>;
      };
      return transcript.segments.map((s) => [s.start, s.end, s.text]);
    };
    // Words start every 0.6 s in the first sentence (0-3 s), every 0.74 or 0.76 s in the second (3.5-5 s).
    assert.deepEqual(await lines('8'), [
      [0, 3, 'One two three four five.'],
      [3.5, 5, 'Six seven.'],
    ]);
    assert.deepEqual(await lines('3'), [
      [0, 1.8, 'One two three'],
      [1.8, 3, 'four five.'],
      [3.5, 5, 'Six seven.'],
    ]);
  });

  it('detects the language with a multilingual model (language=auto)', async (context) => {
    if (skipped(context)) return;
    const out = await mkdtemp(path.join(dir, 'cli-'));
    const result = await runCli(['transcribe', '--media-url', file('tone-8s.mp3'), '--format', 'txt'], {
      cwd: out,
      env: { ...FUGOOD, MEDIAFLOW_WHISPER_MODEL: file('multilingual.bin') },
    });
    assert.equal(result.exitCode, 0, result.stderr);
    const answer = JSON.parse(result.stdout) as Record<string, string>;
    assert.equal(answer.language, 'de');
    assert.equal(answer.text, 'Hello world.');
  });

  it('transcribes Chinese, Arabic and Thai: the text as said, words without spaces cut apart', async (context) => {
    if (skipped(context)) return;
    const out = await mkdtemp(path.join(dir, 'cli-'));
    const result = await runCli(['transcribe', '--media-url', file('tone-8s.mp3'), '--format', 'json'], {
      cwd: out,
      env: { ...FUGOOD, MEDIAFLOW_WHISPER_MODEL: file('scripts.bin') },
    });
    assert.equal(result.exitCode, 0, result.stderr);
    const answer = JSON.parse(result.stdout) as Record<string, string>;
    assert.equal(answer.language, 'zh');
    assert.equal(answer.text, '你好，世界。 مرحبا بالعالم. สวัสดี ชาวโลก');
    // whisper.cpp gives one token for 你好，世界。 and one for ชาวโลก: each is cut into two words, the token's time
    // shared between them by length, as docs/operations.md says.
    assert.deepEqual(JSON.parse(await readFile(path.resolve(out, answer.output_file!), 'utf8')), {
      language: 'zh',
      text: answer.text,
      segments: [
        {
          start: 0,
          end: 2,
          text: '你好，世界。',
          words: [
            { start: 0, end: 1, word: '你好，' },
            { start: 1, end: 2, word: '世界。' },
          ],
        },
        {
          start: 2.5,
          end: 4,
          text: 'مرحبا بالعالم.',
          words: [
            { start: 2.5, end: 3.26, word: 'مرحبا' },
            { start: 3.26, end: 4, word: 'بالعالم.' },
          ],
        },
        {
          start: 4.5,
          end: 6,
          text: 'สวัสดี ชาวโลก',
          words: [
            { start: 4.5, end: 5.26, word: 'สวัสดี' },
            { start: 5.26, end: 5.63, word: 'ชาว' },
            { start: 5.63, end: 6, word: 'โลก' },
          ],
        },
      ],
    });
  });

  it('without the binding or a model: a 501 saying what to install or set, and /health says so', async (context) => {
    if (skipped(context)) return;
    const media_url = files.url('/tone-8s.mp3');
    const unset = await serve({ MEDIAFLOW_WHISPER_MODEL: '' });
    let res = await post(unset.base, '/transcribe/', { media_url });
    assert.equal(res.status, 501, JSON.stringify(res.body));
    assert.equal(res.body.code, 'MF_ERR_UNAVAILABLE');
    assert.match(res.body.error as string, /no model is set \(set MEDIAFLOW_WHISPER_MODEL, or serve --whisper-model/);
    let health = (await (await fetch(`${unset.base}/health`)).json()) as { transcription: Record<string, unknown> };
    assert.equal(health.transcription.available, false);
    assert.equal(health.transcription.model, null);

    const hidden = await serve({
      MEDIAFLOW_WHISPER_MODEL: file('scripted.bin'),
      NODE_OPTIONS: `--require ${HIDE_BINDING}`,
    });
    res = await post(hidden.base, '/transcribe/', { media_url });
    assert.equal(res.status, 501, JSON.stringify(res.body));
    assert.equal(res.body.error, notInstalled('fugood'));
    health = (await (await fetch(`${hidden.base}/health`)).json()) as { transcription: Record<string, unknown> };
    assert.equal(health.transcription.available, false);
    assert.match(health.transcription.error as string, /npm install/);
  });

  it(
    'a model name: fetched from MEDIAFLOW_WHISPER_MODEL_URL when a transcription first needs it, once for two ' +
      'concurrent requests, and refused (nothing kept) when it is not the published file',
    async (context) => {
      if (skipped(context)) return;
      // The scripted model served as tiny.en: a whole ggml file, but not the published one (its size and SHA-256).
      let downloads = 0;
      const serveModel = serveFile(file('scripted.bin'), 'application/octet-stream');
      const models = await startFileServer({
        // Answered 4 s late: the other job finishes decoding its sound and joins the download meanwhile (without
        // the wait, a quick refusal could end the first download before the second job asks for the model).
        '/models/ggml-tiny.en.bin': async (req, res, url) => {
          downloads++;
          await new Promise((resolve) => setTimeout(resolve, 4000));
          return serveModel(req, res, url);
        },
      });
      try {
        const named = await serve({
          MEDIAFLOW_WHISPER_MODEL: 'tiny.en',
          MEDIAFLOW_WHISPER_MODEL_URL: models.url('/models'),
          // Both jobs at once, whatever the machine's cores.
          MEDIAFLOW_CONCURRENCY: '2',
        });
        const health = (await (await fetch(`${named.base}/health`)).json()) as {
          transcription: Record<string, unknown>;
        };
        assert.deepEqual(health.transcription, { available: true, model: 'tiny.en', binding: 'fugood' });
        // An English-only name refuses another language before anything is fetched.
        const german = await post(named.base, '/transcribe/', { media_url: files.url('/tone-8s.mp3'), language: 'de' });
        assert.equal(german.status, 400, JSON.stringify(german.body));
        assert.equal(downloads, 0);

        const both = await Promise.all(
          [0, 1].map(() => post(named.base, '/transcribe/', { media_url: files.url('/tone-8s.mp3') })),
        );
        for (const res of both) {
          assert.equal(res.status, 502, JSON.stringify(res.body));
          assert.match(res.body.error as string, /ggml-tiny\.en\.bin/);
        }
        assert.equal(downloads, 1, 'one download for both');
        assert.deepEqual(await readdir(path.join(named.dataDir, 'models')).catch(() => []), []);
      } finally {
        await models.close();
      }
    },
  );

  it('a model file that is missing, not a ggml model or cut short: a 500 naming the setting', async (context) => {
    if (skipped(context)) return;
    const model = await readFile(file('scripted.bin'));
    // Cut right before the first tensor: whisper.cpp would load it as an empty model and recognise nothing.
    await writeFile(file('no-weights.bin'), model.subarray(0, firstTensorAt(model)));
    await copyFile(file('scripted.bin'), file('cut.bin'));
    await truncate(file('cut.bin'), 100_000);
    // Cut inside its last tensor: its header and every tensor's header but the last are whole.
    await copyFile(file('scripted.bin'), file('cut-in-tensors.bin'));
    await truncate(file('cut-in-tensors.bin'), model.length - 1000);
    const cases: Array<[string, RegExp]> = [
      [file('absent.bin'), /the file cannot be read \(ENOENT\)/],
      [file('tone-61s.wav'), /the file is not a ggml model/],
      [file('cut.bin'), /the file is cut short: it ends at byte 100000, inside its vocabulary/],
      [file('no-weights.bin'), /the file is cut short: it holds 0 of the 50 tensors its hyper-parameters call for/],
      [file('cut-in-tensors.bin'), /the file is cut short: it ends at byte \d+, inside its tensor \d+ of 50/],
    ];
    for (const [model, message] of cases) {
      const result = await runCli(['transcribe', '--media-url', file('tone-8s.mp3')], {
        cwd: dir,
        env: { ...FUGOOD, MEDIAFLOW_WHISPER_MODEL: model },
      });
      assert.equal(result.exitCode, 1, result.stdout);
      assert.match(result.stderr, /MEDIAFLOW_WHISPER_MODEL is not a usable whisper\.cpp model: /);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'no server path');
    }
    const bad = await serve({ MEDIAFLOW_WHISPER_MODEL: file('no-weights.bin') });
    // Twice: the second answer comes from what the first read of the file found.
    for (let i = 0; i < 2; i++) {
      const res = await post(bad.base, '/transcribe/', { media_url: files.url('/tone-8s.mp3') });
      assert.equal(res.status, 500, JSON.stringify(res.body));
      assert.match(res.body.error as string, /holds 0 of the 50 tensors/);
    }
    const health = (await (await fetch(`${bad.base}/health`)).json()) as { transcription: Record<string, unknown> };
    assert.equal(health.transcription.available, false);
    assert.equal(health.transcription.model, 'no-weights.bin');
    assert.match(health.transcription.error as string, /holds 0 of the 50 tensors/);

    // Cut inside its tensors: refused by the request's own check, before its input is fetched, synchronous or not.
    const cut = await serve({ MEDIAFLOW_WHISPER_MODEL: file('cut-in-tensors.bin') });
    const fetched = () => files.hits.get('/tone-8s.mp3') ?? 0;
    const before = fetched();
    for (const headers of [{}, { Prefer: 'respond-async' }] as Array<Record<string, string>>) {
      const form = new FormData();
      form.append('media_url', files.url('/tone-8s.mp3'));
      const res = await fetch(`${cut.base}/transcribe/`, { method: 'POST', body: form, headers });
      const body = (await res.json()) as Record<string, string>;
      assert.equal(res.status, 500, JSON.stringify(body));
      assert.equal(body.code, 'MF_ERR_INTERNAL');
      assert.match(body.error!, /^MEDIAFLOW_WHISPER_MODEL is not a usable whisper\.cpp model: the file is cut short/);
      assert.match(body.error!, /inside its tensor \d+ of 50/);
    }
    assert.equal(fetched(), before, 'the input was not fetched');
  });

  it("never shows a model URL's credentials or a server path in an answer or a job record", async (context) => {
    if (skipped(context)) return;
    const escaped = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    /** Asserts that a text shows neither the credentials nor the tests' folder (every data directory is in it). */
    const clean = (text: string) => {
      assert.doesNotMatch(text, /secret|user:/, 'no credentials');
      assert.doesNotMatch(text, escaped(dir), 'no server path');
    };
    const records = async (dataDir: string) =>
      Promise.all(
        (await readdir(path.join(dataDir, 'jobs'))).map((name) => readFile(path.join(dataDir, 'jobs', name), 'utf8')),
      );
    // The scripted model served as tiny.en: not the published file, so its download is refused.
    const models = await startFileServer({
      '/models/ggml-tiny.en.bin': serveFile(file('scripted.bin'), 'application/octet-stream'),
    });
    try {
      const modelUrl = models.url('/models/ggml-tiny.en.bin');
      const withSecret = {
        MEDIAFLOW_WHISPER_MODEL: 'tiny.en',
        MEDIAFLOW_WHISPER_MODEL_URL: models.url('/models').replace('://', '://user:secret@'),
      };

      // Fetched from 127.0.0.1, private addresses being allowed: a 502 naming the URL without its credentials.
      const allowed = await serve(withSecret);
      const sync = await post(allowed.base, '/transcribe/', { media_url: files.url('/tone-8s.mp3') });
      assert.equal(sync.status, 502, JSON.stringify(sync.body));
      assert.match(sync.body.error as string, new RegExp(`^Failed to download ${escaped(modelUrl).source}: it sent `));
      clean(JSON.stringify(sync.body));
      const id = await submitJob(
        allowed.base,
        '/transcribe/',
        { media_url: files.url('/tone-8s.mp3') },
        { Prefer: 'respond-async' },
      );
      const job = await waitForJob(allowed.base, id);
      assert.equal(job.status, 'failed');
      assert.match(job.error!.error, /^Failed to download http:\/\/127\.0\.0\.1:\d+\/models\/ggml-tiny\.en\.bin: /);
      clean(JSON.stringify(job));
      for (const record of await records(allowed.dataDir)) clean(record);

      // Refused by the address guard (private addresses not allowed; the input uploaded as a file): a 400 naming the
      // URL without its credentials, nothing fetched.
      const guarded = await serve({ ...withSecret, MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' });
      const served = models.hits.get('/models/ggml-tiny.en.bin');
      const form = new FormData();
      form.append('media_url', new Blob([await readFile(file('tone-8s.mp3'))], { type: 'audio/mpeg' }), 'tone.mp3');
      const res = await fetch(`${guarded.base}/transcribe/`, { method: 'POST', body: form });
      const refused = (await res.json()) as { error: string };
      assert.equal(res.status, 400, JSON.stringify(refused));
      assert.match(refused.error, new RegExp(`^URL '${escaped(modelUrl).source}' is not allowed: .*loopback`));
      clean(JSON.stringify(refused));
      for (const record of await records(guarded.dataDir)) clean(record);
      assert.equal(models.hits.get('/models/ggml-tiny.en.bin'), served);
    } finally {
      await models.close();
    }

    // A fetched model of the wrong size: refused before the input is fetched, naming the setting and the file's name.
    const sized = await serve({ MEDIAFLOW_WHISPER_MODEL: 'tiny.en' });
    await mkdir(path.join(sized.dataDir, 'models'));
    await writeFile(path.join(sized.dataDir, 'models', 'ggml-tiny.en.bin'), 'not a model');
    const fetched = files.hits.get('/tone-8s.mp3');
    const wrong = await post(sized.base, '/transcribe/', { media_url: files.url('/tone-8s.mp3') });
    assert.equal(wrong.status, 500, JSON.stringify(wrong.body));
    assert.match(
      wrong.body.error as string,
      /^MEDIAFLOW_WHISPER_MODEL is not usable: the data directory's models\/ggml-tiny\.en\.bin is not the published one \(11 bytes, not 77704715\)/,
    );
    clean(JSON.stringify(wrong.body));
    assert.equal(files.hits.get('/tone-8s.mp3'), fetched, 'the input was not fetched');
  });

  describe('with a real model, where MEDIAFLOW_WHISPER_MODEL names one', () => {
    const real = process.env.MEDIAFLOW_WHISPER_MODEL;
    const why = missing ?? (real ? undefined : 'MEDIAFLOW_WHISPER_MODEL names no real whisper.cpp model here');
    if (why && !missing) console.warn(`skipping the real-model case: ${why}`);

    it('recognises synthesised speech', { timeout: 300_000 } as never, async (context) => {
      if (why) return (context as { skip?: (reason: string) => void }).skip?.(why);
      // flite, ffmpeg's speech synthesiser, says it.
      // prettier-ignore
      await execa('ffmpeg', [
        '-v', 'error', '-f', 'lavfi', '-i', "flite=text='Hello world. This is a test.'", '-ar', '16000',
        file('speech.wav'),
      ]);
      const out = await mkdtemp(path.join(dir, 'cli-'));
      const result = await runCli(['transcribe', '--media-url', file('speech.wav'), '--format', 'json'], {
        cwd: out,
        env: { MEDIAFLOW_WHISPER_MODEL: real!, MEDIAFLOW_JOB_TIMEOUT: '300s' },
      });
      assert.equal(result.exitCode, 0, result.stderr);
      const answer = JSON.parse(result.stdout) as Record<string, string>;
      assert.match(answer.text!, /hello/i);
      assert.match(answer.text!, /world/i);
      const transcript = JSON.parse(await readFile(path.resolve(out, answer.output_file!), 'utf8')) as {
        segments: Array<{ start: number; end: number; words: Array<{ start: number; end: number }> }>;
      };
      const times = transcript.segments.flatMap((s) => [s.start, s.end, ...s.words.flatMap((w) => [w.start, w.end])]);
      assert.ok(
        times.every((t) => t >= 0 && t <= 2.5),
        `times within the 2.47 s of speech: ${times.join(', ')}`,
      );
    });
  });

  describe('a long recognition (a random model of tiny.en size)', () => {
    const slow = { timeout: 300_000 } as never;
    let random: Awaited<ReturnType<typeof serve>>;

    before(async () => {
      if (missing) return;
      await writeRandomModel(file('random.bin'), { seed: 1 });
      random = await serve({ MEDIAFLOW_WHISPER_MODEL: file('random.bin'), MEDIAFLOW_JOB_TIMEOUT: '6s' });
    });

    /** Submits a job on the 65 s tone and waits until the recogniser's child runs. */
    const started = async (on = random) => {
      const id = await submitJob(
        on.base,
        '/transcribe/',
        { media_url: files.url('/tone-65s.wav') },
        {
          Prefer: 'respond-async',
        },
      );
      const pid = on.child.pid!;
      assert.ok(await eventually(async () => (await whisperChildren(pid)).length > 0, 30_000, 50), 'the child runs');
      return id;
    };

    it('DELETE /jobs/<id> kills the child within 2 s and leaves no file', slow, async (context) => {
      if (skipped(context)) return;
      const id = await started();
      const pid = random.child.pid!;
      const cancelled = performance.now();
      const res = await fetch(`${random.base}/jobs/${id}`, { method: 'DELETE' });
      assert.ok(res.status < 300, `DELETE answered ${res.status}`);
      assert.ok(await eventually(async () => (await whisperChildren(pid)).length === 0, 5000, 20));
      const took = performance.now() - cancelled;
      assert.ok(took < 2000, `the child ended ${Math.round(took)} ms after the DELETE`);
      const job = await waitForJob(random.base, id);
      assert.equal(job.status, 'cancelled');
      assert.ok(await eventually(async () => (await filesUnder(path.join(random.dataDir, 'work'))).length === 0));
      assert.deepEqual(await filesUnder(path.join(random.dataDir, 'uploads')), []);
    });

    it(
      'holds a job slot: with MEDIAFLOW_CONCURRENCY=1 an ffmpeg operation waits until it ends',
      slow,
      async (context) => {
        if (skipped(context)) return;
        // Two jobs at once (MEDIAFLOW_WORKERS=2) but one slot: the second job waits for the slot, not in the job queue.
        const one = await serve({
          MEDIAFLOW_WHISPER_MODEL: file('random.bin'),
          MEDIAFLOW_CONCURRENCY: '1',
          MEDIAFLOW_WORKERS: '2',
          MEDIAFLOW_JOB_TIMEOUT: '120s',
        });
        const recognition = await started(one);
        const other = await submitJob(
          one.base,
          '/extract-audio/',
          { video_url: files.url('/talk.mp4') },
          { Prefer: 'respond-async' },
        );
        // With a slot, a job leaves `starting` for `download` at once; this one stays there while the recognition runs.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        const waiting = await getJob(one.base, other);
        assert.deepEqual([waiting.status, waiting.stage], ['running', 'starting']);
        assert.equal((await getJob(one.base, recognition)).status, 'running');
        assert.equal((await whisperChildren(one.child.pid!)).length, 1, 'the recognition still runs');
        assert.deepEqual(await ffmpegChildren(one.child.pid!), [], 'no ffmpeg beside it');

        // The recognition cancelled, its slot goes to the waiting job, which then runs to the end.
        const res = await fetch(`${one.base}/jobs/${recognition}`, { method: 'DELETE' });
        assert.ok(res.status < 300, `DELETE answered ${res.status}`);
        const done = await waitForJob(one.base, other, isFinal, { ms: 60_000 });
        assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
        assert.equal((await getJob(one.base, recognition)).status, 'cancelled');
      },
    );

    it('the time limit (MEDIAFLOW_JOB_TIMEOUT) ends it with the timeout error', slow, async (context) => {
      if (skipped(context)) return;
      const id = await started();
      const job = await waitForJob(random.base, id, isFinal, { ms: 60_000 });
      assert.equal(job.status, 'failed');
      assert.deepEqual(job.error, {
        status: 504,
        error: 'Processing ran past its time limit and was stopped',
        code: 'MF_ERR_TIMEOUT',
      });
      assert.deepEqual(await whisperChildren(random.child.pid!), []);
      assert.ok(await eventually(async () => (await filesUnder(path.join(random.dataDir, 'work'))).length === 0));
      assert.deepEqual(await filesUnder(path.join(random.dataDir, 'uploads')), []);
    });
  });

  describe('a faster binding: @napi-rs/whisper (MEDIAFLOW_WHISPER_BINDING)', () => {
    const napiMissing = missing ?? bindingMissing('napi');
    if (napiMissing && !missing) console.warn(`skipping the @napi-rs/whisper cases: ${napiMissing}`);
    const napiSkipped = (context: unknown) => {
      if (napiMissing) (context as { skip?: (why: string) => void }).skip?.(napiMissing);
      return napiMissing !== undefined;
    };
    const health = async (base: string) =>
      ((await (await fetch(`${base}/health`)).json()) as { transcription: Record<string, unknown> }).transcription;

    it("auto takes it where it can run: /health says so, and the words are its whisper.cpp's", async (context) => {
      if (napiSkipped(context)) return;
      const auto = await serve({ MEDIAFLOW_WHISPER_MODEL: file('scripted.bin'), MEDIAFLOW_WHISPER_BINDING: 'auto' });
      assert.deepEqual(await health(auto.base), { available: true, model: 'scripted.bin', binding: 'napi' });
      assert.deepEqual(await health(server.base), { available: true, model: 'scripted.bin', binding: 'fugood' });
      const res = await post(auto.base, '/transcribe/', { media_url: files.url('/tone-8s.mp3'), format: 'json' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      // whisper.cpp 1.7.2 starts " This" where the segment before ended (2 s, not 2.5 s) and, the script ending on
      // one timestamp (5 s), moves its window there and replays the script until the end of the 8 s.
      assert.deepEqual(JSON.parse(await (await fetch(res.body.output_file as string)).text()), NAPI_TRANSCRIPT);
    });

    it('napi or fugood named but not installed: a 501 saying what to install; auto falls back', async (context) => {
      if (napiSkipped(context)) return;
      const media_url = files.url('/tone-8s.mp3');
      const env = { MEDIAFLOW_WHISPER_MODEL: file('scripted.bin'), NODE_OPTIONS: `--require ${HIDE_BINDING}` };
      for (const binding of ['napi', 'fugood'] as const) {
        const hidden = await serve({ ...env, MEDIAFLOW_WHISPER_BINDING: binding, HIDE_WHISPER_BINDINGS: binding });
        const res = await post(hidden.base, '/transcribe/', { media_url });
        assert.equal(res.status, 501, JSON.stringify(res.body));
        const error = notInstalled(binding);
        assert.equal(res.body.error, error);
        assert.deepEqual(await health(hidden.base), { available: false, model: 'scripted.bin', binding: null, error });
      }
      const fallback = await serve({ ...env, MEDIAFLOW_WHISPER_BINDING: 'auto', HIDE_WHISPER_BINDINGS: 'napi' });
      assert.deepEqual(await health(fallback.base), { available: true, model: 'scripted.bin', binding: 'fugood' });
      const res = await post(fallback.base, '/transcribe/', { media_url, format: 'txt' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.text, 'Hello world. This is mediaflow.');
    });

    it(
      'DELETE /jobs/<id> kills its child within 2 s and leaves no file',
      { timeout: 300_000 } as never,
      async (context) => {
        if (napiSkipped(context)) return;
        // 10 minutes of tone: @napi-rs runs the random tiny.en model fast, so the recognition must be long to be cut.
        // prettier-ignore
        await execa('ffmpeg', [
        '-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=600:sample_rate=16000', '-c:a', 'pcm_s16le',
        file('tone-600s.wav'),
      ]);
        if (!(await readdir(dir)).includes('random.bin')) await writeRandomModel(file('random.bin'), { seed: 1 });
        const napi = await serve({ MEDIAFLOW_WHISPER_MODEL: file('random.bin'), MEDIAFLOW_WHISPER_BINDING: 'napi' });
        assert.equal((await health(napi.base)).binding, 'napi');
        const id = await submitJob(
          napi.base,
          '/transcribe/',
          { media_url: files.url('/tone-600s.wav') },
          { Prefer: 'respond-async' },
        );
        const pid = napi.child.pid!;
        assert.ok(await eventually(async () => (await whisperChildren(pid)).length > 0, 30_000, 50), 'the child runs');
        const cancelled = performance.now();
        const res = await fetch(`${napi.base}/jobs/${id}`, { method: 'DELETE' });
        assert.ok(res.status < 300, `DELETE answered ${res.status}`);
        assert.ok(await eventually(async () => (await whisperChildren(pid)).length === 0, 5000, 20));
        const took = performance.now() - cancelled;
        assert.ok(took < 2000, `the child ended ${Math.round(took)} ms after the DELETE`);
        assert.equal((await waitForJob(napi.base, id)).status, 'cancelled');
        assert.ok(await eventually(async () => (await filesUnder(path.join(napi.dataDir, 'work'))).length === 0));
        assert.deepEqual(await filesUnder(path.join(napi.dataDir, 'uploads')), []);
      },
    );
  });
});
