import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { waitForJob } from './helpers/jobs.js';
import { durationOf, probe } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';

/**
 * POST /render/ and `mediaflow render` up to the resolved timeline: the edit document sent as JSON, as a form with
 * merge values and a file part, and from the CLI; every problem of a bad document told at once with its path,
 * before anything is fetched; the limits; the dry run's answer, against media probed for real.
 */

const RED = 'red-640x360.jpg';
const GREEN = 'green-360x640.png';
const CLIP = 'clip-2s-640x360-25fps.mp4';
const MUSIC = 'tone-5s-44k-stereo.mp3';
const SUBTITLES = 'hello.srt';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  body: Json;
}

async function postJson(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}/render/`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function postForm(base: string, form: FormData | URLSearchParams): Promise<Answer> {
  const res = await fetch(`${base}/render/`, { method: 'POST', body: form });
  return { status: res.status, body: (await res.json()) as Json };
}

/** Requests the file server has seen, in all. */
const requests = (files: FileServer) => [...files.hits.values()].reduce((sum, count) => sum + count, 0);

/** The files under a server's uploads/, relative to it. */
const uploads = async (server: TestServer) =>
  (await readdir(path.join(server.dataDir, 'uploads'), { recursive: true })).map(String).sort();

let server: TestServer;
let files: FileServer;
let templates: string;
const url = (name: string) => files.url(`/f/${name}`);

before(async () => {
  await fixtures(RED, GREEN, CLIP, MUSIC, SUBTITLES);
  files = await startFileServer();
  templates = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-templates-'));
  await writeFile(
    path.join(templates, 'card.json'),
    JSON.stringify({
      description: 'A picture with a title',
      output: { width: 640, height: 360 },
      merge: { TITLE: 'Untitled', SECONDS: '3' },
      tracks: [
        { clips: [{ type: 'image', src: '{{PHOTO}}', duration: '{{SECONDS}}' }] },
        { clips: [{ type: 'text', text: '{{TITLE}}', start: 0, duration: '{{SECONDS}}' }] },
      ],
    }),
  );
  await writeFile(path.join(templates, 'quote.json'), JSON.stringify({ tracks: [] }));
  server = await startMediaflow({ MEDIAFLOW_TEMPLATES: templates });
});

after(async () => {
  await server?.close();
  await files?.close();
  if (templates) await rm(templates, { recursive: true, force: true });
});

describe('POST /render/ with dry_run', () => {
  it('answers the timeline: auto starts, durations, transitions and loops from the probed media', async () => {
    const before = await uploads(server);
    const seen = requests(files);
    const res = await postJson(server.base, {
      dry_run: true,
      merge: { TITLE: 'Episode 12' },
      edit: {
        output: { width: 640, height: 360, fps: 25 },
        tracks: [
          {
            clips: [
              { type: 'image', src: url(RED), duration: 2 },
              { id: 'talk', type: 'video', src: url(CLIP), transition: { type: 'fade', duration: 0.5 } },
              { type: 'image', src: url(GREEN), duration: 1, fit: 'contain', transition: { type: 'wipeleft' } },
              { type: 'image', src: url(RED), duration: 1 },
            ],
          },
          { clips: [{ type: 'text', text: '{{TITLE}}', start: 0, duration: 2 }] },
          { clips: [{ type: 'audio', src: url(MUSIC), loop: true, trim: 1, duration: 7 }] },
          { clips: [{ type: 'captions', src: url(SUBTITLES), start: 1 }] },
          { clips: [{ type: 'waveform', from: 'talk', position: 'center' }] },
        ],
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['message', 'timeline']);
    assert.equal(res.body.message, 'Timeline resolved successfully');
    const { timeline } = res.body;
    // The video lasts as its probe says (ffprobe, asked apart, agrees to the millisecond).
    const talk = timeline.clips[1].facts.duration as number;
    assert.ok(Math.abs(talk - durationOf(await probe(await fixture(CLIP)))) < 0.002, String(talk));
    const round = (value: number) => Math.round(value * 1000) / 1000;
    const videoEnd = round(1.5 + talk);
    const picture = (name: string, width: number, height: number) => ({
      src: url(name),
      facts: { duration: null, image: true, video: { width, height, fps: 25 } },
    });
    const music = timeline.clips.find((clip: Json) => clip.type === 'audio').facts;
    assert.ok(Math.abs(music.duration - 5) < 0.1, String(music.duration));
    assert.deepEqual(timeline, {
      duration: 7,
      width: 640,
      height: 360,
      fps: 25,
      clips: [
        { track: 0, index: 0, id: null, type: 'image', start: 0, end: 2, ...picture(RED, 640, 360) },
        {
          track: 0,
          index: 1,
          id: 'talk',
          type: 'video',
          start: 1.5,
          end: videoEnd,
          src: url(CLIP),
          facts: {
            duration: talk,
            image: false,
            video: { width: 640, height: 360, fps: 25 },
            audio: { sample_rate: 48000, channels: 2 },
          },
        },
        // 0.5 s into the video by its transition's default duration.
        {
          track: 0,
          index: 2,
          id: null,
          type: 'image',
          start: round(videoEnd - 0.5),
          end: round(videoEnd + 0.5),
          ...picture(GREEN, 360, 640),
        },
        {
          track: 0,
          index: 3,
          id: null,
          type: 'image',
          start: round(videoEnd + 0.5),
          end: round(videoEnd + 1.5),
          ...picture(RED, 640, 360),
        },
        { track: 1, index: 0, id: null, type: 'text', start: 0, end: 2, src: null, facts: null },
        {
          track: 2,
          index: 0,
          id: null,
          type: 'audio',
          start: 0,
          end: 7,
          src: url(MUSIC),
          facts: { duration: music.duration, image: false, audio: { sample_rate: 44100, channels: 2 } },
        },
        // The subtitles' one cue ends at 2 s of their own clock.
        {
          track: 3,
          index: 0,
          id: null,
          type: 'captions',
          start: 1,
          end: 3,
          src: url(SUBTITLES),
          facts: { duration: timeline.clips[6].facts.duration, image: false, subtitles: true },
        },
        { track: 4, index: 0, id: null, type: 'waveform', start: 1.5, end: videoEnd, src: null, facts: null },
      ],
      merge: { TITLE: 'Episode 12' },
    });
    // Each file once, though the red picture is in two clips; and nothing written.
    assert.equal(files.hits.get(`/f/${RED}`), 1);
    assert.equal(requests(files) - seen, 5);
    assert.deepEqual(await uploads(server), before);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('takes merge values from form fields, and a file part named after a merge field as that file', async () => {
    const seen = requests(files);
    const edit = {
      output: { width: 640, height: 360 },
      tracks: [
        { clips: [{ type: 'image', src: '{{PHOTO}}', duration: '{{SECONDS}}' }] },
        { clips: [{ type: 'text', text: '{{TITLE}} ({{ PART }})', start: 0, duration: 1 }] },
        { clips: [{ type: 'audio', src: '{{MUSIC}}', volume: '{{DB}}' }] },
      ],
    };
    const form = new FormData();
    form.append('edit', JSON.stringify(edit));
    form.append('dry_run', 'true');
    form.append('TITLE', 'Episode 12');
    form.append('PART', 'two');
    form.append('SECONDS', '2.5');
    form.append('DB', '-6');
    form.append('MUSIC', url(MUSIC));
    form.append('PHOTO', new Blob([await readFile(await fixture(GREEN))], { type: 'image/png' }), 'cover.png');
    const res = await postForm(server.base, form);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [photo, title, music] = res.body.timeline.clips;
    assert.match(photo.src, new RegExp(`^${server.base}/uploads/.+\\.png$`), 'the uploaded file, as an own output');
    assert.deepEqual([photo.start, photo.end, photo.facts.video], [0, 2.5, { width: 360, height: 640, fps: 25 }]);
    assert.deepEqual([title.type, title.end], ['text', 1]);
    assert.equal(music.src, url(MUSIC));
    assert.deepEqual(res.body.timeline.merge, {
      PHOTO: photo.src,
      SECONDS: '2.5',
      TITLE: 'Episode 12',
      PART: 'two',
      MUSIC: url(MUSIC),
      DB: '-6',
    });
    // The upload was read from the output store; only the music was fetched.
    assert.equal(requests(files) - seen, 1);

    // An urlencoded form, and the JSON body's merge object, are read the same way.
    const urlencoded = new URLSearchParams({
      edit: JSON.stringify(edit),
      dry_run: 'true',
      PHOTO: url(RED),
      SECONDS: '1',
      TITLE: 't',
      PART: 'p',
      MUSIC: url(MUSIC),
      DB: '0',
    });
    const plain = await postForm(server.base, urlencoded);
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    assert.equal(plain.body.timeline.clips[0].src, url(RED));
  });

  it('keeps no uploaded file of a refused request, and takes no file in its own fields', async () => {
    const before = await uploads(server);
    const photo = new Blob([await readFile(await fixture(GREEN))], { type: 'image/png' });
    const refused = new FormData();
    refused.append('edit', JSON.stringify({ tracks: [{ clips: [{ type: 'image', src: '{{PHOTO}}' }] }] }));
    refused.append('PHOTO', photo, 'cover.png');
    const res = await postForm(server.base, refused);
    assert.equal(res.status, 400);
    assert.deepEqual(
      res.body.errors.map((problem: Json) => problem.path),
      ['tracks[0].clips[0].duration'],
    );
    const asFile = new FormData();
    asFile.append('edit', photo, 'edit.json');
    const own = await postForm(server.base, asFile);
    assert.equal(own.status, 400);
    assert.equal(own.body.error, 'File part `edit` is not an input: that field of this route takes no file');
    assert.deepEqual(await uploads(server), before);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('renders a template by name with merge values, and names the known ones for an unknown name', async () => {
    const res = await postJson(server.base, {
      template: 'card',
      dry_run: true,
      merge: { PHOTO: url(RED), TITLE: 'Hello' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.timeline.clips.map((clip: Json) => [clip.type, clip.start, clip.end]),
      [
        ['image', 0, 3],
        ['text', 0, 3],
      ],
    );
    assert.deepEqual(res.body.timeline.merge, { PHOTO: url(RED), SECONDS: '3', TITLE: 'Hello' });
    const unknown = await postJson(server.base, { template: 'poster', dry_run: true });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error, "Unknown template 'poster': the templates are card, quote");
    // The template's merge field without a value, at its path in the template.
    const missing = await postJson(server.base, { template: 'card', dry_run: true });
    assert.equal(missing.status, 400);
    assert.deepEqual(
      missing.body.errors.map((problem: Json) => problem.path),
      ['tracks[0].clips[0].src'],
    );
  });
});

describe('POST /render/ refusals', () => {
  it('tells every problem of a document at once, each with its path, before anything is fetched', async () => {
    const seen = requests(files);
    const res = await postJson(server.base, {
      dry_run: true,
      edit: {
        output: { width: 641, quality: 'best' },
        tracks: [
          {
            clips: [
              { type: 'image', src: url(RED) },
              { type: 'video', src: url(CLIP), colour: 'red' },
              { type: 'gif', src: url(GREEN) },
            ],
          },
          { clips: [{ type: 'text', text: '{{TITLE}}', duration: 1 }] },
        ],
        notes: 'x',
      },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'MF_ERR_PARAM');
    assert.deepEqual(
      res.body.errors.map((problem: Json) => problem.path),
      [
        'tracks[1].clips[0].text',
        'output.width',
        'output.quality',
        'tracks[0].clips[0].duration',
        'tracks[0].clips[1].colour',
        'tracks[0].clips[2].type',
        'notes',
      ],
    );
    assert.equal(res.body.error, `tracks[1].clips[0].text: ${res.body.errors[0].error}`);
    assert.match(res.body.errors[0].error, /^merge field \{\{TITLE\}\} has no value/);
    assert.match(res.body.errors[4].error, /^unknown field: a video clip has type, id, start, src/);
    assert.equal(requests(files), seen, 'nothing fetched');
  });

  it('refuses overlaps, a from naming no clip, a transition with no clip before it, before fetching', async () => {
    const seen = requests(files);
    const res = await postJson(server.base, {
      edit: {
        tracks: [
          {
            clips: [
              { type: 'image', src: url(RED), duration: 3, transition: { type: 'fade' } },
              { type: 'image', src: url(GREEN), duration: 3, start: 2 },
            ],
          },
          {
            clips: [
              { type: 'captions', from: 'voice-over' },
              { type: 'waveform', from: 'intro' },
            ],
          },
          { clips: [{ id: 'intro', type: 'text', text: 'Hi', duration: 1 }] },
        ],
      },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(
      res.body.errors.map((problem: Json) => [problem.path, problem.error]),
      [
        ['tracks[0].clips[0].transition', 'a transition needs a video or image clip before it on its track'],
        ['tracks[1].clips[0].from', "no clip has the id 'voice-over'"],
        [
          'tracks[1].clips[1].from',
          "'intro' is tracks[2].clips[0], a text clip: waveform clips follow an audio, voice or video clip",
        ],
        [
          'tracks[0].clips[1].start',
          'the clip (2 s to 5 s) overlaps tracks[0].clips[0] (0 s to 3 s) on its track: clips of one track meet ' +
            'only by a transition; put one on another track',
        ],
      ],
    );
    assert.equal(requests(files), seen, 'nothing fetched');
  });

  it('refuses what the probed media show, in a job too, whose error keeps every problem', async () => {
    const res = await postJson(
      server.base,
      {
        dry_run: true,
        edit: {
          tracks: [
            { clips: [{ type: 'video', src: url(CLIP), trim: 3 }] },
            { clips: [{ type: 'audio', src: url(MUSIC), duration: 9 }] },
          ],
        },
      },
      { prefer: 'respond-async' },
    );
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const job = await waitForJob(server.base, res.body.job_id);
    assert.equal(job.status, 'failed');
    const error = job.error as unknown as Json;
    assert.equal(error.status, 400);
    assert.deepEqual(
      error.errors.map((problem: Json) => problem.path),
      ['tracks[0].clips[0].trim', 'tracks[1].clips[0].duration'],
    );
    assert.match(error.errors[0].error, /^is 3 s, past the end of the media, which lasts 2(\.\d+)? s$/);
    assert.match(error.errors[1].error, /^lasts 9 s, past the end of the media: it has 5(\.\d+)? s after `trim`$/);
    assert.equal(error.error, `tracks[0].clips[0].trim: ${error.errors[0].error}`);
  });

  it('answers a 400 for a request without a document, with two, or a storyboard without a dry run', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'Missing the edit: give `edit` (an edit document) or `template` (the name of a template)'],
      [{ edit: { tracks: [] }, template: 'card' }, 'Give `edit` or `template`, not both'],
      [{ edit: '{"tracks": [', dry_run: true }, 'Expected `edit` to be a JSON object, but it is not valid JSON:'],
      [{ edit: [1], dry_run: true }, 'Expected `edit` to be one JSON object, got a list of 1'],
      [{ template: 'card', merge: { PHOTO: url(RED) }, storyboard: true }, 'Expected `dry_run` to be true'],
      // In a JSON body the values are in `merge`: other fields are ignored, as unknown fields are.
      [
        { edit: { tracks: [{ clips: [{ type: 'text', text: '{{T}}', duration: 1 }] }] }, T: 'x', dry_run: true },
        'tracks[0].clips[0].text: merge field {{T}} has no value',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await postJson(server.base, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(String(res.body.error).startsWith(message), `${res.body.error} for ${JSON.stringify(body)}`);
    }
  });
});

describe('POST /render/ limits', () => {
  let limited: TestServer;
  before(async () => {
    limited = await startMediaflow({
      MEDIAFLOW_MAX_CLIPS: '3',
      MEDIAFLOW_MAX_DURATION: '6',
      MEDIAFLOW_MAX_PIXELS: '500000',
    });
  });
  after(() => limited?.close());

  it('refuses clips, pixels and seconds past the limits before fetching, and seconds the media add after', async () => {
    const seen = requests(files);
    const res = await postJson(limited.base, {
      dry_run: true,
      edit: {
        tracks: [
          {
            clips: [
              { type: 'image', src: url(RED), duration: 2 },
              { type: 'image', src: url(GREEN), duration: 2 },
              { type: 'image', src: url(RED), duration: 2 },
              { type: 'image', src: url(GREEN), duration: 2 },
            ],
          },
        ],
      },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(
      res.body.errors.map((problem: Json) => [problem.path, problem.error]),
      [
        ['tracks', '4 clips, more than the limit of 3 (MEDIAFLOW_MAX_CLIPS)'],
        ['output', '1080x1920 is 2073600 pixels a frame, more than the limit of 500000 (MEDIAFLOW_MAX_PIXELS)'],
        ['tracks', 'the timeline lasts 8 s, more than the limit of 6 s (MEDIAFLOW_MAX_DURATION)'],
      ],
    );
    assert.equal(requests(files), seen, 'nothing fetched');
    // Within the limits as written, past them once the music is probed: it lasts 5 s, from 2 s.
    const probed = await postJson(limited.base, {
      dry_run: true,
      edit: {
        output: { width: 640, height: 360 },
        tracks: [
          { clips: [{ type: 'image', src: url(RED), duration: 2 }] },
          { clips: [{ type: 'audio', src: url(MUSIC), start: 2 }] },
        ],
      },
    });
    assert.equal(probed.status, 400, JSON.stringify(probed.body));
    assert.equal(probed.body.errors.length, 1);
    assert.equal(probed.body.errors[0].path, 'tracks');
    assert.match(probed.body.errors[0].error, /^the timeline lasts 7(\.\d+)? s, more than the limit of 6 s/);
  });
});

describe('mediaflow render', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-render-cli-'));
    for (const name of [RED, CLIP]) await copyFile(await fixture(name), path.join(dir, name));
    await writeFile(
      path.join(dir, 'edit.json'),
      JSON.stringify({
        output: { width: 640, height: 360 },
        tracks: [
          {
            clips: [
              { type: 'image', src: RED, duration: 1 },
              { type: 'video', src: CLIP, volume: '{{DB}}' },
            ],
          },
          { clips: [{ type: 'text', text: '{{TITLE}}', duration: 1 }] },
        ],
      }),
    );
    await writeFile(
      path.join(dir, 'bad.json'),
      JSON.stringify({ tracks: [{ clips: [{ type: 'image', src: RED }, { type: 'sticker' }] }] }),
    );
  });
  after(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  it('takes the document as its argument, local paths as src and --merge NAME=value; prints the timeline', async () => {
    const { exitCode, stdout, stderr } = await runCli(
      ['render', 'edit.json', '--dry-run', '--merge', 'TITLE=Episode 12', '--merge', 'DB=-3', '--out-dir', 'out'],
      { cwd: dir },
    );
    assert.equal(exitCode, 0, stderr);
    const answer = JSON.parse(stdout) as Json;
    assert.equal(answer.message, 'Timeline resolved successfully');
    assert.deepEqual(
      answer.timeline.clips.map((clip: Json) => [clip.type, clip.src, clip.start]),
      [
        ['image', RED, 0],
        ['video', CLIP, 1],
        ['text', null, 0],
      ],
    );
    assert.deepEqual(answer.timeline.merge, { DB: '-3', TITLE: 'Episode 12' });
    assert.deepEqual(await readdir(path.join(dir, 'out')), [], 'no output');
  });

  it('reads the document from standard input for -, and prints each problem of a bad one with its path', async () => {
    const piped = await runCli(['render', '-', '--dry-run', '--merge', 'TITLE=x', '--merge', 'DB=0'], {
      cwd: dir,
      input: await readFile(path.join(dir, 'edit.json'), 'utf8'),
    });
    assert.equal(piped.exitCode, 0, piped.stderr);
    assert.equal((JSON.parse(piped.stdout) as Json).timeline.clips.length, 3);
    const bad = await runCli(['render', 'bad.json', '--dry-run'], { cwd: dir });
    assert.equal(bad.exitCode, 2);
    assert.equal(
      bad.stderr,
      'mediaflow: tracks[0].clips[0].duration: missing: an image clip needs it\n' +
        'mediaflow:   tracks[0].clips[0].duration: missing: an image clip needs it\n' +
        "mediaflow:   tracks[0].clips[1].type: unknown type 'sticker': one of video, image, text, audio, voice, " +
        'captions, waveform',
    );
    const missing = await runCli(['render', 'nowhere.json', '--dry-run'], { cwd: dir });
    assert.equal(missing.exitCode, 2);
    assert.equal(missing.stderr, 'mediaflow: Cannot read nowhere.json: no such file');
  });
});
