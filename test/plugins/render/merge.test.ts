import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from '../../helpers/lifecycle.js';
import { checkDocument } from '../../../src/plugins/render/document-check.js';
import { mergeFields, mergeUses } from '../../../src/plugins/render/merge.js';
import { EDIT_SCHEMA, EXAMPLE } from '../../../src/plugins/render/schema.js';
import { listTemplates, loadTemplate } from '../../../src/plugins/render/templates.js';
import { MediaflowError } from '../../../src/engine/errors.js';

/** A document as the tests read it back: tracks of clips of any fields. */
type Clips = { merge?: unknown; tracks: Array<{ clips: Array<Record<string, unknown>> }> };

const DOCUMENT: Clips = {
  merge: { TITLE: 'Default title', SECONDS: 4 },
  tracks: [
    {
      clips: [
        { type: 'image', src: '{{PHOTO}}', duration: '{{SECONDS}}' },
        { type: 'text', text: 'Now: {{ TITLE }} ({{TITLE}}, part {{PART}})', duration: 2 },
      ],
    },
    { clips: [{ type: 'audio', src: 'https://example.com/{{MUSIC}}.mp3', volume: '{{DB}}', loop: '{{LOOP}}' }] },
  ],
};

describe('merge fields', () => {
  it('finds every use with its JSON path, whole or inside text, and not in the merge defaults', () => {
    assert.deepEqual(mergeUses(DOCUMENT), [
      { name: 'PHOTO', path: 'tracks[0].clips[0].src', whole: true },
      { name: 'SECONDS', path: 'tracks[0].clips[0].duration', whole: true },
      { name: 'TITLE', path: 'tracks[0].clips[1].text', whole: false },
      { name: 'TITLE', path: 'tracks[0].clips[1].text', whole: false },
      { name: 'PART', path: 'tracks[0].clips[1].text', whole: false },
      { name: 'MUSIC', path: 'tracks[1].clips[0].src', whole: false },
      { name: 'DB', path: 'tracks[1].clips[0].volume', whole: true },
      { name: 'LOOP', path: 'tracks[1].clips[0].loop', whole: true },
    ]);
  });

  it("takes the request's value, else the document's default, and says which value each field took", () => {
    const merged = mergeFields(DOCUMENT, {
      PHOTO: 'https://example.com/a.jpg',
      TITLE: 'Episode 12',
      PART: '2',
      MUSIC: 'calm',
      DB: '-6',
      LOOP: 'true',
      UNUSED: 'ignored',
    });
    assert.deepEqual(merged.problems, []);
    const clips = (merged.document as Clips).tracks;
    assert.equal(clips[0]!.clips[0]!.src, 'https://example.com/a.jpg');
    assert.equal(clips[0]!.clips[0]!.duration, '4', "the document's default, as text");
    assert.equal(clips[0]!.clips[1]!.text, 'Now: Episode 12 (Episode 12, part 2)');
    assert.equal(clips[1]!.clips[0]!.src, 'https://example.com/calm.mp3');
    assert.deepEqual(merged.used, {
      PHOTO: 'https://example.com/a.jpg',
      SECONDS: '4',
      TITLE: 'Episode 12',
      PART: '2',
      MUSIC: 'calm',
      DB: '-6',
      LOOP: 'true',
    });
    // The defaults stay as they were; the original document is not changed.
    assert.deepEqual((merged.document as Clips).merge, DOCUMENT.merge);
    assert.equal(DOCUMENT.tracks[0]!.clips[0]!.src, '{{PHOTO}}');
  });

  it('puts a value in once: braces in a value are not read again', () => {
    const merged = mergeFields(DOCUMENT, { PHOTO: '{{TITLE}}', PART: '{{PART}}', MUSIC: 'm', DB: '0', LOOP: 'false' });
    const clips = (merged.document as Clips).tracks[0]!.clips;
    assert.equal(clips[0]!.src, '{{TITLE}}');
    assert.equal(clips[1]!.text, 'Now: Default title (Default title, part {{PART}})');
  });

  it('names a field without a value at every place it is used, and leaves it there', () => {
    const merged = mergeFields(DOCUMENT, { PHOTO: 'a.jpg', DB: '0', LOOP: 'false' });
    assert.deepEqual(
      merged.problems.map((problem) => problem.path),
      ['tracks[0].clips[1].text', 'tracks[1].clips[0].src'],
    );
    assert.match(merged.problems[0]!.error, /^merge field \{\{PART\}\} has no value: give it in the request's `merge`/);
    assert.match(merged.problems[1]!.error, /\{\{MUSIC\}\}/);
  });

  it('reads a whole-field value as the number or boolean its schema takes, and text where it takes text', () => {
    const document = {
      tracks: [
        {
          clips: [
            { type: 'audio', src: '{{N}}', volume: '{{N}}', loop: '{{YES}}', duration: '{{N}}' },
            { type: 'text', text: '{{N}}', duration: 1, start: 3 },
          ],
        },
      ],
    };
    const merged = mergeFields(document, { N: '3', YES: 'true' });
    const checked = checkDocument(EDIT_SCHEMA, merged.document, merged.whole);
    assert.deepEqual(checked.problems, []);
    const [audio, text] = (checked.value as typeof document).tracks[0]!.clips as Array<Record<string, unknown>>;
    assert.deepEqual([audio!.src, audio!.volume, audio!.loop, audio!.duration], ['3', 3, true, 3]);
    assert.equal(text!.text, '3');
    // The same text written in the document itself is not read as a number.
    const written = checkDocument(EDIT_SCHEMA, { tracks: [{ clips: [{ type: 'audio', src: 'a', volume: '3' }] }] });
    assert.deepEqual(written.problems, [
      { path: 'tracks[0].clips[0].volume', error: "expected a number from -60 to 20, got '3'" },
    ]);
  });
});

describe('the document check', () => {
  it('takes the example document as it is', () => {
    assert.deepEqual(checkDocument(EDIT_SCHEMA, EXAMPLE).problems, []);
  });

  it('tells every problem at once, each at its path', () => {
    const { problems } = checkDocument(EDIT_SCHEMA, {
      output: { width: 1081, format: 'avi', colour: 'red' },
      tracks: [
        {
          clips: [
            { type: 'video', trim: 'soon', volume: 'loud' },
            { type: 'gif', src: 'a.gif' },
            { src: 'b.jpg' },
            { type: 'image', src: 'c.jpg', duration: 'auto', transition: { duration: 1 } },
          ],
        },
        { clips: [{ type: 'text', text: '', duration: 2, color: 'red', font_size: 3 }], name: 'titles' },
      ],
      extra: true,
    });
    assert.deepEqual(
      problems.map((problem) => problem.path),
      [
        'output.width',
        'output.format',
        'output.colour',
        'tracks[0].clips[0].src',
        'tracks[0].clips[0].trim',
        'tracks[0].clips[0].volume',
        'tracks[0].clips[1].type',
        'tracks[0].clips[2].type',
        'tracks[0].clips[3].duration',
        'tracks[0].clips[3].transition.type',
        'tracks[1].clips[0].text',
        'tracks[1].clips[0].color',
        'tracks[1].clips[0].font_size',
        'tracks[1].name',
        'extra',
      ],
    );
    const at = (path: string) => problems.find((problem) => problem.path === path)!.error;
    assert.equal(at('output.width'), 'expected an even whole number from 16 to 4096, got 1081');
    assert.equal(at('output.format'), "expected one of mp4, mov, mkv, webm, gif, got 'avi'");
    assert.match(at('output.colour'), /^unknown field: the output has format, width, height, fps/);
    assert.equal(at('tracks[0].clips[0].src'), 'missing: a video clip needs it');
    assert.match(at('tracks[0].clips[0].trim'), /^expected a time: seconds \(12\.5\) or \[HH:\]MM:SS/);
    assert.equal(at('tracks[0].clips[0].volume'), "expected a gain in dB from -60 to 20, or mute, got 'loud'");
    assert.equal(
      at('tracks[0].clips[1].type'),
      "unknown type 'gif': one of video, image, text, audio, voice, captions, waveform",
    );
    assert.match(at('tracks[0].clips[2].type'), /^missing: a clip needs it \(one of video, image/);
    assert.match(at('tracks[0].clips[3].duration'), /not auto: a picture has no length of its own/);
    assert.equal(at('tracks[1].clips[0].text'), 'expected text, got none');
    assert.match(at('tracks[1].clips[0].color'), /^expected a colour as #RRGGBB or #RRGGBBAA/);
    assert.equal(at('tracks[1].clips[0].font_size'), 'expected a whole number from 8 to 400, got 3');
    assert.equal(at('tracks[1].name'), 'unknown field: a track has clips');
    assert.equal(at('extra'), 'unknown field: the edit document has description, output, merge, tracks');
  });

  it('refuses a document that is no object, and a track list that is empty', () => {
    assert.deepEqual(checkDocument(EDIT_SCHEMA, { tracks: [] }).problems, [
      { path: 'tracks', error: 'expected at least 1 item, got 0' },
    ]);
    assert.deepEqual(checkDocument(EDIT_SCHEMA, { tracks: 'all' }).problems, [
      { path: 'tracks', error: "expected a list, got 'all'" },
    ]);
  });
});

describe('templates', () => {
  it('are found by name and list their merge fields; an unknown one names the rest', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-templates-'));
    try {
      await writeFile(path.join(dir, 'card.json'), JSON.stringify({ ...DOCUMENT, description: 'A card' }));
      await writeFile(path.join(dir, 'quote.json'), JSON.stringify({ tracks: [] }));
      await writeFile(path.join(dir, 'Not A Name.json'), '{}');
      await writeFile(path.join(dir, 'broken.json'), '{ not json');
      assert.deepEqual(loadTemplate(dir, 'quote'), { tracks: [] });
      assert.throws(
        () => loadTemplate(dir, 'nope'),
        (error: MediaflowError) =>
          error.status === 400 && error.message === "Unknown template 'nope': the templates are broken, card, quote",
      );
      assert.throws(
        () => loadTemplate(dir, 'broken'),
        (error: MediaflowError) => error.status === 500 && error.message === "Template 'broken' cannot be read",
      );
      assert.throws(
        () => loadTemplate(path.join(dir, 'missing'), 'card'),
        (error: MediaflowError) => error.message === "Unknown template 'card': this server has no templates",
      );
      const [card] = listTemplates(dir).filter((template) => template.name === 'card');
      assert.deepEqual(card, {
        name: 'card',
        description: 'A card',
        merge: [
          // Those a request must give first, each group in the document's order.
          { name: 'PHOTO', kind: 'url' },
          { name: 'PART', kind: 'text' },
          { name: 'MUSIC', kind: 'url' },
          { name: 'DB', kind: 'number' },
          { name: 'LOOP', kind: 'text' },
          { name: 'SECONDS', kind: 'number', default: '4' },
          { name: 'TITLE', kind: 'text', default: 'Default title' },
        ],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
