import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from '../helpers/lifecycle.js';
import { definitionProblems } from '../helpers/pipeline-problems.js';
import { MediaflowError } from '../../src/engine/errors.js';
import { builtinRegistry } from '../../src/plugins/index.js';
import { parsePipeline } from '../../src/pipelines/definition.js';
import { readInputs } from '../../src/pipelines/inputs.js';
import { csvRows, jsonlRows, parseCsv } from '../../src/pipelines/rows.js';
import { parseExpr } from '../../src/pipelines/template.js';

const registry = builtinRegistry();
const PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');

const problems = definitionProblems;

const base = (steps: string, extra = '') => `name: p
description: test
inputs:
  text: string
  images: urls
  voice: url
  count:
    type: integer
    default: 2
${extra}steps:
${steps}
results:
  out: "{{ steps.a.output }}"
`;

describe('pipeline definitions', () => {
  it('parses the shipped pipelines and orders their steps in stages', async () => {
    const short = parsePipeline(
      await readFile(path.join(PIPELINES, 'text-to-short.yaml'), 'utf8'),
      'text-to-short.yaml',
      registry,
    );
    assert.deepEqual(short.stages, [
      ['subtitles', 'speech', 'frames'],
      ['slideshow', 'music_under'],
      ['voiced'],
      ['short'],
    ]);
    assert.deepEqual(short.results, [{ name: 'short', step: 'short' }]);
    assert.deepEqual(
      short.inputs.map((i) => [i.name, i.type, i.default]),
      [
        ['text', 'string', ''],
        ['images', 'urls', undefined],
        ['voice', 'url', ''],
        ['script', 'string', ''],
        ['speaker', 'string', ''],
        ['speed', 'number', 1],
        ['music', 'url', ''],
        ['music_volume', 'number', -18],
        ['seconds_per_image', 'integer', 3],
        ['words_per_line', 'integer', 6],
        ['seconds_per_line', 'integer', 2],
      ],
    );
    const steps = new Map(short.steps.map((step) => [step.name, step]));
    assert.deepEqual(
      ['subtitles', 'speech', 'music_under'].map((name) => [steps.get(name)!.when, steps.get(name)!.unless]),
      [
        ['voice', 'script'],
        ['script', undefined],
        ['music', undefined],
      ],
    );
    const podcast = parsePipeline(
      await readFile(path.join(PIPELINES, 'podcast.yaml'), 'utf8'),
      'podcast.yaml',
      registry,
    );
    assert.deepEqual(podcast.stages, [['body'], ['episode']]);
    const narrated = parsePipeline(
      await readFile(path.join(PIPELINES, 'narrated-short.yaml'), 'utf8'),
      'narrated-short.yaml',
      registry,
    );
    // The music is mixed under the voice beside the captions and the pictures, before the slideshow needs it.
    assert.deepEqual(narrated.stages, [
      ['captions', 'frames', 'soundtrack'],
      ['slideshow'],
      ['voiced'],
      ['branded'],
      ['short'],
    ]);
    const captions = parsePipeline(
      await readFile(path.join(PIPELINES, 'auto-captions.yaml'), 'utf8'),
      'auto-captions.yaml',
      registry,
    );
    assert.deepEqual(captions.stages, [['captions'], ['captioned']]);
    assert.deepEqual(
      captions.inputs.map((i) => [i.name, i.type, i.default]),
      [
        ['video', 'url', undefined],
        ['language', 'string', 'auto'],
        ['words_per_line', 'integer', 3],
        ['highlight_color', 'string', '#FFD700'],
        ['position', 'string', 'bottom'],
      ],
    );
  });

  it('reads JSON definitions too, and operations by their CLI spelling', () => {
    const json = JSON.stringify({
      name: 'crop',
      inputs: { image: { type: 'url' } },
      steps: { a: { op: 'crop-image-to-short', with: { image_url: '{{ inputs.image }}' } } },
      results: { out: '{{ steps.a.output }}' },
    });
    const definition = parsePipeline(json, 'crop.json', registry);
    assert.equal(definition.steps[0]!.op, 'crop_image_to_short');
  });

  it('names the file, line, step and field of each problem, all of them at once', () => {
    const found = problems(
      base(`  a:
    op: generate-subtitles
    with:
      text: "{{ inputs.text }}"
      colour: red
      words_per_line: 0
  b:
    op: no-such-operation
  c:
    op: add-subtitles
    with:
      video_url: "{{ steps.nowhere.output }}"
      subtitle_url: "{{ inputs.missing }}"`),
    );
    assert.deepEqual(found, [
      "p.yaml:15: step 'a', field 'with.colour': unknown parameter 'colour' of operation 'generate-subtitles' " +
        '(parameters: text, words_per_line, seconds_per_line, format, font, font_size, bold, color, ' +
        'outline_color, outline, background, position, margin, max_width, highlight, highlight_color)',
      "p.yaml:16: step 'a', field 'with.words_per_line': Expected `words_per_line` to be an integer from 1 to " +
        '100, got `0`',
      `p.yaml:18: step 'b', field 'op': unknown operation 'no-such-operation' (known: ${registry
        .list()
        .map((p) => p.name)
        .join(', ')})`,
      "p.yaml:22: step 'c', field 'with.video_url': {{ steps.nowhere.output }} names no step (steps: a, b, c)",
      "p.yaml:23: step 'c', field 'with.subtitle_url': {{ inputs.missing }} names no input (declared: text, " +
        'images, voice, count)',
    ]);
  });

  it('refuses ill-typed references: a list into one URL, text into an integer, a file into text', () => {
    const found = problems(
      base(`  a:
    op: crop_image_to_short
    with:
      image_url: "{{ inputs.images }}"
  b:
    op: generate-subtitles
    with:
      text: "{{ steps.a.output }}"
      words_per_line: "{{ inputs.text }}"
  c:
    op: merge-audio-video
    with:
      video_url: "{{ inputs.text }}"
      audio_url: "{{ inputs.voice }}"`),
    );
    assert.equal(found.length, 4, found.join('\n'));
    assert.match(
      found[0]!,
      /^p\.yaml:14: step 'a', field 'with\.image_url': parameter 'image_url' takes one URL or file, but \{\{ inputs\.images \}\} is a list of URLs/,
    );
    assert.match(
      found[1]!,
      /step 'b', field 'with\.text': parameter 'text' takes text, but \{\{ steps\.a\.output \}\} is a step's output file/,
    );
    assert.match(found[2]!, /step 'b', field 'with\.words_per_line': .*declare the input with type integer/);
    assert.match(found[3]!, /step 'c', field 'with\.video_url': .*declare the input with type url/);
  });

  it('finds cycles, missing required parameters, a misused item and a bad default', () => {
    const found = problems(
      base(
        `  a:
    op: merge-videos
    with:
      video_urls: ["{{ steps.b.output }}", "{{ inputs.voice }}"]
  b:
    op: merge-audio-video
    with:
      video_url: "{{ steps.a.output }}"
      audio_url: "{{ item }}"
  c:
    op: images-to-video
    with:
      fps: "{{ inputs.count }}"
      format: "{{ inputs.fmt }}"
  d:
    op: resize_image
    each: "{{ inputs.images }}"
    with:
      image_url: "{{ inputs.voice }}"
      width: 10
      height: 10
  e:
    op: convert-video
    with:
      video_url: "{{ inputs.voice }}"
      format: "{{ inputs.container }}"`,
        '  fmt: string\n  container:\n    type: string\n    default: mpg\n',
      ),
    );
    const text = found.join('\n');
    assert.match(text, /step 'a', field 'with': steps form a cycle: a -> b -> a/);
    assert.match(text, /step 'b', field 'with\.audio_url': \{\{ item \}\} is only defined in a step with `each`/);
    assert.match(
      text,
      /step 'c', field 'with\.image_urls': missing required parameter 'image_urls' of operation 'images-to-video'/,
    );
    assert.match(text, /step 'd', field 'each': the step has `each` but no parameter uses \{\{ item \}\}/);
    assert.match(
      text,
      /step 'e', field 'with\.format': the default of input 'container' does not suit parameter 'format': Unsupported format 'mpg'/,
    );
  });

  it('reports YAML syntax errors with their line, and a shape that is not a pipeline', () => {
    assert.match(problems('name: p\nsteps:\n  a: [1\n')[0]!, /^p\.yaml:\d+: /);
    assert.deepEqual(problems('- a\n- b\n'), [
      'p.yaml:1: a pipeline must be a mapping with name, description, inputs, steps and results',
    ]);
    const found = problems('name: p\nsurprise: 1\ninputs:\n  x:\n    type: float\nsteps: {}\n');
    assert.ok(
      found.includes(
        "p.yaml:2: field 'surprise': unknown key 'surprise' (expected name, description, inputs, steps, results)",
      ),
      found.join('\n'),
    );
    assert.ok(
      found.includes(
        "p.yaml:5: field 'inputs.x.type': unknown type 'float' (expected string, integer, number, url, urls)",
      ),
      found.join('\n'),
    );
    assert.ok(
      found.some((line) => line.includes("field 'steps': expected a mapping of step names to steps")),
      found.join('\n'),
    );
    assert.ok(
      found.some((line) => line.includes("field 'results'")),
      found.join('\n'),
    );
  });

  it("takes conditional steps, alternatives and files beside a step's output, and refuses their misuse", () => {
    const speech = `  s:
    op: speak
    when: "{{ inputs.text }}"
    with:
      text: "{{ inputs.text }}"
      captions: srt
`;
    assert.deepEqual(
      problems(
        base(`${speech}  a:
    op: add-subtitles
    unless: "{{ inputs.count }}"
    with:
      video_url: "{{ inputs.voice }}"
      subtitle_url: "{{ steps.s.subtitle_file_url || inputs.voice }}"`),
      ),
      [],
    );
    const found = problems(
      base(`${speech}  a:
    op: add-subtitles
    when: text
    unless: "{{ inputs.nothing }}"
    with:
      video_url: "{{ steps.s.subtitles }}"
      subtitle_url: "{{ inputs.images || steps.s.output }}"
  b:
    op: generate-subtitles
    with:
      text: "Said: {{ inputs.text || inputs.voice }}"`),
    );
    assert.equal(found.length, 6, found.join('\n'));
    assert.match(found[0]!, /step 'a', field 'when': expected an input: "\{\{ inputs\.<name> \}\}"/);
    assert.match(found[1]!, /step 'a', field 'unless': \{\{ inputs\.nothing \}\} names no input/);
    assert.match(
      found[2]!,
      /field 'with\.video_url': \{\{ steps\.s\.subtitles \}\} names no file of step 's': its operation answers files as output_file, subtitle_file_url/,
    );
    assert.match(found[3]!, /field 'with\.subtitle_url': the alternatives of .* must all be one value, or all lists/);
    assert.match(found[4]!, /step 'b', field 'with\.text': alternatives \(`\|\|`\) must be the whole value/);
    assert.deepEqual(parseExpr('{{ inputs.a || steps.b.subtitle_file_url }}'), {
      kind: 'first',
      refs: [{ input: 'a' }, { step: 'b', field: 'subtitle_file_url' }],
    });
  });

  it('parses references, text around them, and lists', () => {
    assert.deepEqual(parseExpr('{{ inputs.text }}'), { kind: 'ref', ref: { input: 'text' } });
    assert.deepEqual(parseExpr(' {{steps.a-b.output}} '), { kind: 'ref', ref: { step: 'a-b' } });
    assert.deepEqual(parseExpr('https://cdn.example/{{ inputs.id }}.jpg'), {
      kind: 'text',
      parts: ['https://cdn.example/', { input: 'id' }, '.jpg'],
    });
    assert.deepEqual(parseExpr(['a', 3]), {
      kind: 'list',
      items: [
        { kind: 'literal', value: 'a' },
        { kind: 'literal', value: 3 },
      ],
    });
    assert.throws(() => parseExpr('{{ input.text }}'), /unknown reference `\{\{ input\.text \}\}`/);
    assert.throws(() => parseExpr('{{ inputs.text'), /unbalanced/);
  });
});

describe('pipeline inputs', () => {
  const definition = parsePipeline(
    base(`  a:
    op: generate-subtitles
    with:
      text: "{{ inputs.text }}"`),
    'p.yaml',
    registry,
  );

  it('reads values by type, with defaults', () => {
    assert.deepEqual(
      readInputs(definition, { text: 'hi', images: ' a.jpg, ,b.jpg ', voice: 'v.mp3', extra: 'ignored' }),
      {
        text: 'hi',
        images: ['a.jpg', 'b.jpg'],
        voice: 'v.mp3',
        count: 2,
      },
    );
    assert.deepEqual(
      readInputs(definition, { text: 'hi', images: ['a.jpg', 'b.jpg'], voice: 'v', count: '7' }).count,
      7,
    );
  });

  it('refuses missing, ill-typed and (when asked) unknown inputs with a 400', () => {
    const refused = (raw: Record<string, unknown>, pattern: RegExp, refuseUnknown = false) =>
      assert.throws(
        () => readInputs(definition, raw, { refuseUnknown }),
        (error: unknown) => error instanceof MediaflowError && error.status === 400 && pattern.test(error.message),
      );
    refused({ images: 'a', voice: 'v' }, /^Missing required input `text` of pipeline 'p'$/);
    refused(
      { text: 't', images: 'a', voice: 'v', count: 'two' },
      /^Expected input `count` to be an integer, got `two`$/,
    );
    refused({ text: 't', images: 'a', voice: 'v', colour: 'red' }, /^Unknown input `colour` of pipeline 'p'/, true);
  });
});

describe('number inputs', () => {
  const withNumber = (use: string, declaration = 'number') => `name: n
inputs:
  speed: ${declaration}
steps:
  a:
    op: generate-subtitles
    with:
${use}
results:
  out: "{{ steps.a.output }}"
`;

  it('reads decimals and whole numbers, and refuses anything else with a 400 naming the input', () => {
    const definition = parsePipeline(
      withNumber('      text: "At {{ inputs.speed }}"', '{ type: number, default: "0.5" }'),
      'n.yaml',
      registry,
    );
    assert.deepEqual(definition.inputs, [{ name: 'speed', type: 'number', default: 0.5 }]);
    assert.deepEqual(readInputs(definition, {}), { speed: 0.5 });
    for (const [raw, value] of [
      ['1.25', 1.25],
      [' -3 ', -3],
      ['.5', 0.5],
      [7, 7],
      [2.5, 2.5],
    ] as const)
      assert.equal(readInputs(definition, { speed: raw }).speed, value);
    for (const raw of ['fast', '1,5', '1e3', 'Infinity', '0x10', '1.2.3']) {
      assert.throws(
        () => readInputs(definition, { speed: raw }),
        (error: unknown) =>
          error instanceof MediaflowError &&
          error.status === 400 &&
          error.message === `Expected input \`speed\` to be a number, got \`${raw}\``,
        raw,
      );
    }
  });

  it('passes into text and number parameters, not into integer ones; a default must be a number', () => {
    assert.deepEqual(problems(withNumber('      text: "{{ inputs.speed }}"')), []);
    const [intoInteger] = problems(withNumber('      text: hi\n      words_per_line: "{{ inputs.speed }}"'));
    assert.match(
      intoInteger!,
      /field 'with\.words_per_line': parameter 'words_per_line' takes an integer, but \{\{ inputs\.speed \}\} is of type number/,
    );
    const [badDefault] = problems(withNumber('      text: hi', '{ type: number, default: fast }'));
    assert.match(badDefault!, /field 'inputs\.speed\.default': default does not fit type number/);
  });
});

describe('batch files', () => {
  it('parses CSV: quotes, doubled quotes, commas and line breaks in quotes, CRLF, a BOM', () => {
    const text = '\ufeffa,b,c\r\n1,"x, y","say ""hi"""\r\n2,"two\nlines",\r\n\r\n"",3,\n';
    assert.deepEqual(
      parseCsv(text).map((r) => r.fields),
      [['a', 'b', 'c'], ['1', 'x, y', 'say "hi"'], ['2', 'two\nlines', ''], [''], ['', '3', '']],
    );
    assert.deepEqual(csvRows(text, 'rows.csv'), [
      { row: 1, line: 2, values: { a: '1', b: 'x, y', c: 'say "hi"' } },
      { row: 2, line: 3, values: { a: '2', b: 'two\nlines' } },
      { row: 3, line: 6, values: { b: '3' } },
    ]);
    assert.deepEqual(
      parseCsv('a\n""').map((r) => r.fields),
      [['a'], ['']],
    );
  });

  it('refuses malformed CSV and JSONL, naming the line', () => {
    assert.throws(
      () => parseCsv('a,b\n1,"open\n', 'r.csv'),
      /^Error: r\.csv:2: a quoted field is never closed$|r\.csv:2: a quoted field is never closed/,
    );
    assert.throws(() => parseCsv('a\n"x"y\n', 'r.csv'), /r\.csv:2: unexpected character after a closing quote/);
    assert.throws(() => csvRows('a,b\n1,2,3\n', 'r.csv'), /r\.csv:2: 3 fields, but the header names 2 columns/);
    assert.throws(() => csvRows('a,a\n', 'r.csv'), /column 'a' appears twice/);
    assert.deepEqual(jsonlRows('{"a":1}\n\n{"a":[2,3]}\n', 'r.jsonl'), [
      { row: 1, line: 1, values: { a: 1 } },
      { row: 2, line: 3, values: { a: [2, 3] } },
    ]);
    assert.throws(() => jsonlRows('{"a":1}\n[1]\n', 'r.jsonl'), /r\.jsonl:2: expected a JSON object/);
    assert.throws(() => jsonlRows('{"a":\n', 'r.jsonl'), /r\.jsonl:1: not valid JSON/);
  });
});
