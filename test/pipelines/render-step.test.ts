import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixture, fixtures } from '../helpers/fixtures.js';
import { startFileServer, type FileServer } from '../helpers/file-server.js';
import { assertNearRgb, audioOf, durationOf, frameRgb, probe, videoOf } from '../helpers/media.js';
import { runCli } from '../helpers/mediaflow.js';
import { definitionProblems as problems } from '../helpers/pipeline-problems.js';
import { leftovers, servePipelines, type Served } from '../helpers/pipeline-server.js';
import { FUGOOD, HELLO_SCRIPT, whisperCases, writeScriptedModel } from '../helpers/whisper-model.js';
import { builtinRegistry } from '../../src/plugins/index.js';
import { parsePipeline } from '../../src/pipelines/definition.js';
import { showExpr } from '../../src/pipelines/template.js';

/**
 * `op: render` in a pipeline: a step gives a template or an edit document, and merge values that are the pipeline's
 * own (its inputs, earlier steps' files); the document is passed as written, its `{{NAME}}` merge fields untouched.
 * Checked as a definition, run for real from the CLI with local files, and the shipped `audiogram` pipeline over HTTP
 * with a scripted whisper model.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const registry = builtinRegistry();

/** Subtitles made from a text, then an edit rendered with them, a photo and a title: the pipeline run below. */
const CARD = `name: card
inputs:
  photo: url
  text: string
  title:
    type: string
    default: From the pipeline
steps:
  subtitles:
    op: generate-subtitles
    with:
      text: "{{ inputs.text }}"
      seconds_per_line: 2
  # The document is the render's own: {{PHOTO}}, {{CAPTIONS}} and {{TITLE}} are its merge fields.
  card:
    op: render
    with:
      edit:
        output: { width: 320, height: 240, fps: 25, background: "#000040" }
        merge: { TITLE: "Untitled" }
        tracks:
          - clips: [{ type: image, src: "{{PHOTO}}", duration: 2, fit: contain }]
          - clips: [{ type: text, text: "{{TITLE}}", start: 0, duration: 2, position: top, font_size: 90 }]
          - clips: [{ type: captions, src: "{{CAPTIONS}}", start: 0, font_size: 90 }]
      merge:
        PHOTO: "{{ inputs.photo }}"
        CAPTIONS: "{{ steps.subtitles.output }}"
        TITLE: "{{ inputs.title }}!"
  # A dry run writes no file: what it answers (the timeline) is in the run's answers.
  plan:
    op: render
    with:
      dry_run: true
      template: quote-card
      merge: { QUOTE: "{{ inputs.text }}", AUTHOR: Anonymous, DURATION: 2 }
results:
  card: "{{ steps.card.output }}"
  subtitles: "{{ steps.subtitles.output }}"
`;

describe('op: render in a pipeline definition', () => {
  it('takes an edit document as written and merge values that are the pipeline own', () => {
    const definition = parsePipeline(CARD, 'card.yaml', registry);
    assert.deepEqual(definition.stages, [['subtitles', 'plan'], ['card']]);
    const card = definition.steps.find((step) => step.name === 'card')!;
    assert.deepEqual(card.after, ['subtitles']);
    // The document untouched: its merge fields are still there, for the render to fill.
    assert.equal(card.with.edit!.kind, 'document');
    assert.match(showExpr(card.with.edit!), /"src":"\{\{PHOTO\}\}"/);
    assert.equal(
      showExpr(card.with.merge!),
      '{PHOTO: {{ inputs.photo }}, CAPTIONS: {{ steps.subtitles.output }}, TITLE: {{ inputs.title }}!}',
    );
    // An edit given as JSON text is passed as written too, braces and all; one whole reference is an input's text,
    // and alternatives the first input given, as any whole value may give them.
    const editAs = (written: string) =>
      parsePipeline(
        CARD.replace(/ {6}edit:\n(?: {8}.*\n)+/, `      edit: ${written}\n`),
        'card.yaml',
        registry,
      ).steps.find((step) => step.name === 'card')!.with.edit;
    assert.deepEqual(editAs(`'{"tracks": [{"clips": [{"type": "image", "src": "{{PHOTO}}"}]}]}'`), {
      kind: 'literal',
      value: '{"tracks": [{"clips": [{"type": "image", "src": "{{PHOTO}}"}]}]}',
    });
    assert.deepEqual(editAs('"{{ inputs.text }}"'), { kind: 'ref', ref: { input: 'text' } });
    assert.deepEqual(editAs('"{{ inputs.text || inputs.title }}"'), {
      kind: 'first',
      refs: [{ input: 'text' }, { input: 'title' }],
    });
  });

  it('refuses a reference inside a document, a mapping elsewhere, a list as a merge value, a dry run as a file', () => {
    const text = `name: p
inputs:
  photos: urls
steps:
  frames:
    op: crop_image_to_short
    each: "{{ inputs.photos }}"
    with:
      image_url: "{{ item }}"
  a:
    op: render
    with:
      edit:
        tracks:
          - clips: [{ type: image, src: "{{ inputs.photos }}", duration: 1 }]
  b:
    op: render
    with:
      template: quote-card
      merge:
        QUOTE: "{{ inputs.photos }}"
        AUTHOR: "{{ steps.frames.output }}"
        DURATION: [1, 2]
  c:
    op: convert-video
    with:
      video_url: "{{ steps.a.output }}"
      format: { container: mp4 }
  d:
    op: render
    with:
      template: quote-card
      dry_run: true
results:
  out: "{{ steps.d.output }}"
`;
    assert.deepEqual(problems(text), [
      "p.yaml:14: step 'a', field 'with.edit': {{ inputs.photos }} is not read inside a document, which is passed " +
        'as written (its {{NAME}} are its merge fields): give the value as a merge value, `merge: {NAME: "{{ ' +
        'inputs.photos }}"}`, and write {{NAME}} in the document',
      "p.yaml:21: step 'b', field 'with.merge': the value of DURATION is a list: give one value",
      "p.yaml:28: step 'c', field 'with.format': expected a string, a number, a boolean or a list, not a mapping " +
        "(a mapping is taken by a document parameter, such as render's `edit`, and by named values, such as " +
        "render's `merge`)",
      "p.yaml:35: field 'results.out': {{ steps.d.output }} is no file: operation 'render' writes none (what it " +
        "answers is in the run's `answers`)",
    ]);
    // Once DURATION is one value: a list of URLs and a list of files are no merge value either.
    const lists = problems(text.replace('        DURATION: [1, 2]\n', '')).filter((line) => line.includes("'b'"));
    assert.deepEqual(lists, [
      "p.yaml:21: step 'b', field 'with.merge.QUOTE': the value QUOTE of 'merge' is one value, but {{ inputs.photos " +
        '}} is a list of URLs (type urls)',
      "p.yaml:22: step 'b', field 'with.merge.AUTHOR': the value AUTHOR of 'merge' is one value, but {{ " +
        'steps.frames.output }} is a list of output files (the step has `each`, or its operation writes several)',
    ]);
  });
});

describe('op: render runs in a pipeline', () => {
  let dir: string;
  before(async () => {
    await fixtures('red-640x360.jpg');
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-pipeline-render-'));
    await copyFile(await fixture('red-640x360.jpg'), path.join(dir, 'red.jpg'));
    await writeFile(path.join(dir, 'card.yaml'), CARD);
  });
  after(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  it('renders an edit with a step output and local files as merge values, and answers a dry run', async () => {
    const run = await runCli(
      ['run', 'card.yaml', '--input', 'photo=red.jpg', '--input', 'text=ONE TWO', '--out-dir', 'out'],
      { cwd: dir },
    );
    assert.equal(run.exitCode, 0, run.stderr);
    const answer = JSON.parse(run.stdout) as Json;
    assert.deepEqual(answer.outputs, { card: 'out/card.mp4', subtitles: 'out/subtitles.srt' });
    // The dry run's timeline, with the value each merge field took (DURATION as the step gave it).
    assert.deepEqual(answer.answers.plan.timeline.merge, {
      QUOTE: 'ONE TWO',
      AUTHOR: 'Anonymous',
      DURATION: '2',
      BACKGROUND: '#1E293B',
      ACCENT: '#F59E0B',
    });
    assert.equal(answer.answers.card.duration, 2);
    const video = path.join(dir, 'out/card.mp4');
    const info = await probe(video);
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [320, 240]);
    assert.ok(Math.abs(durationOf(info) - 2) < 0.05, String(durationOf(info)));
    assert.equal(audioOf(info), undefined);
    const frame = await frameRgb(video, 1);
    // The photo (red, 16:9) letterboxed on the background; the title on top, the captions at the bottom, in white.
    assertNearRgb(frame.pixel(160, 120), [255, 0, 0], 40, 'the photo in the middle');
    assertNearRgb(frame.pixel(160, 10), [0, 0, 0x40], 16, 'the background above it');
    const white = (y0: number, y1: number) => {
      let count = 0;
      for (let y = y0; y < y1; y++)
        for (let x = 0; x < 320; x++) if (frame.pixel(x, y).every((channel) => channel > 200)) count++;
      return count;
    };
    assert.ok(white(0, 60) > 50, 'the title, from the pipeline input');
    assert.ok(white(180, 240) > 50, 'the captions, from the subtitles step');
    assert.equal(
      (await readFile(path.join(dir, 'out/subtitles.srt'), 'utf8')).trim(),
      '1\n00:00:00,000 --> 00:00:02,000\nONE TWO',
    );
  });

  it('refuses a bad document with all its problems, and a dry run whose output is used, before any run', async () => {
    // The document is checked with the run's merge values, before the step before it runs: every problem told.
    await writeFile(
      path.join(dir, 'bad.yaml'),
      `name: bad
inputs:
  photo: url
steps:
  first:
    op: crop_image_to_short
    with:
      image_url: "{{ inputs.photo }}"
  card:
    op: render
    with:
      edit:
        tracks:
          - clips: [{ type: image, src: "{{PHOTO}}" }, { type: sticker }]
      merge: { PHOTO: "{{ steps.first.output }}" }
results:
  card: "{{ steps.card.output }}"
`,
    );
    const bad = await runCli(['run', 'bad.yaml', '--input', 'photo=red.jpg', '--out-dir', 'out-bad'], { cwd: dir });
    assert.equal(bad.exitCode, 2);
    assert.deepEqual(bad.stderr.split('\n'), [
      "mediaflow: Step 'card' (render) failed: tracks[0].clips[0].duration: missing: an image clip needs it",
      'mediaflow:   tracks[0].clips[0].duration: missing: an image clip needs it',
      "mediaflow:   tracks[0].clips[1].type: unknown type 'sticker': one of video, image, text, audio, voice, " +
        'captions, waveform',
    ]);

    await writeFile(
      path.join(dir, 'maybe.yaml'),
      `name: maybe
inputs:
  look: { type: string, default: "true" }
steps:
  card:
    op: render
    with:
      template: quote-card
      dry_run: "{{ inputs.look }}"
      merge: { QUOTE: q, AUTHOR: a }
results:
  card: "{{ steps.card.output }}"
`,
    );
    const run = await runCli(['run', 'maybe.yaml', '--out-dir', 'out-maybe'], { cwd: dir });
    assert.equal(run.exitCode, 2);
    assert.equal(
      run.stderr,
      "mediaflow: Step 'card' (render) failed: it writes no file with these values, but a result uses its output " +
        "(what it answers is in the run's `answers`)",
    );
  });
});

describe('the audiogram pipeline (a scripted whisper model)', () => {
  const { missing, skipped } = whisperCases('audiogram pipeline');
  let dir: string;
  let files: FileServer;
  let server: Served | undefined;

  before(async () => {
    await fixtures('tone-5s-44k-stereo.mp3', 'red-640x360.jpg');
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-audiogram-'));
    files = await startFileServer();
    if (missing) return;
    const model = path.join(dir, 'scripted.bin');
    await writeScriptedModel(model, { segments: HELLO_SCRIPT });
    server = await servePipelines(await mkdtemp(path.join(dir, 'data-')), {
      MEDIAFLOW_WHISPER_MODEL: model,
      ...FUGOOD,
    });
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.child;
    await files?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('cuts the part, transcribes it to SRT and renders the audiogram template with it', async (context) => {
    if (skipped(context)) return;
    const form = new FormData();
    form.append('episode', files.url('/f/tone-5s-44k-stereo.mp3'));
    form.append('start', '1');
    form.append('seconds', '3');
    form.append('title', 'Episode 12');
    form.append('cover', new Blob([await readFile(await fixture('red-640x360.jpg'))], { type: 'image/jpeg' }), 'c.jpg');
    const res = await fetch(`${server!.base}/pipelines/audiogram/`, { method: 'POST', body: form });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual(Object.keys(body.outputs), ['audiogram', 'captions']);
    // The scripted model says its script whatever it hears: the SRT of the part is that script, its times clamped to
    // the part's 3 s.
    const srt = await readFile(server!.pathOf(body.outputs.captions), 'utf8');
    assert.match(srt, /^1\n00:00:00,\d{3} --> 00:00:02,000\nHello world\.\n\n2\n00:00:02,500 --> 00:00:03,\d{3}\n/);
    assert.match(srt, /This is mediaflow\.\n?$/);
    assert.equal(body.answers.audiogram.duration, 3);
    const video = server!.pathOf(body.outputs.audiogram);
    const info = await probe(video);
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [1080, 1920]);
    assert.ok(Math.abs(durationOf(info) - 3) < 0.05, String(durationOf(info)));
    assert.ok(Math.abs(Number(audioOf(info)!.duration) - 3) < 0.05);
    // "Hello world." under the cover in its first 2 s, nothing there in the pause after it.
    const whiteUnderCover = async (seconds: number) => {
      const frame = await frameRgb(video, seconds);
      let count = 0;
      for (let y = 1400; y < 1650; y += 2)
        for (let x = 60; x < 1020; x += 2) if (frame.pixel(x, y).every((channel) => channel > 200)) count++;
      return count;
    };
    assert.ok((await whiteUnderCover(1)) > 300, 'the first cue');
    assert.equal(await whiteUnderCover(2.25), 0, 'the pause between the cues');
    assert.deepEqual(await leftovers(server!.dataDir, 'work'), []);
  });
});
