import assert from 'node:assert/strict';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MediaflowError } from '../../../src/engine/errors.js';
import { espeakVoicesOf, wordStartsOf } from '../../../src/engine/voice/espeak-engine.js';
import { fliteVoicesOf } from '../../../src/engine/voice/flite-engine.js';
import { metadataEntries, ModelFileError, onnxMetadata } from '../../../src/engine/voice/onnx-file.js';
import { readPiperConfig } from '../../../src/engine/voice/piper-config.js';
import { sentencesOf } from '../../../src/engine/voice/text-units.js';
import { parseTtsModels } from '../../../src/engine/voice/tts-models.js';
import { placeWords } from '../../../src/engine/voice/word-times.js';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { toneConfig, toneModel } from '../../helpers/piper-onnx.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-voice-units-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const texts = (text: string, language?: string) => sentencesOf(text, language).map((sentence) => sentence.text);

describe('text cut into sentences and words', () => {
  it('ends sentences at their marks in every script, but not after a title or an initial', () => {
    assert.deepEqual(texts('Dr. Smith met J. R. Jones at 3.14 p.m. today. Was it example.com? Yes!'), [
      'Dr. Smith met J. R. Jones at 3.14 p.m. today.',
      'Was it example.com?',
      'Yes!',
    ]);
    assert.deepEqual(texts('你好世界。今天很好！', 'cmn'), ['你好世界。', '今天很好！']);
    assert.deepEqual(texts('नमस्ते दुनिया। यह एक परीक्षण है।', 'hi'), ['नमस्ते दुनिया।', 'यह एक परीक्षण है।']);
    assert.deepEqual(texts('مرحبا بالعالم. هل أنت بخير؟ نعم', 'ar'), ['مرحبا بالعالم.', 'هل أنت بخير؟', 'نعم']);
    assert.deepEqual(texts('Line one\nLine two'), ['Line one', 'Line two']);
  });

  it('drops what has no word, and cuts a long run at a comma', () => {
    assert.deepEqual(texts('— ... Hello.'), ['Hello.']);
    assert.deepEqual(sentencesOf('  ...  '), []);
    const clause = 'word '.repeat(30).trim();
    const long = sentencesOf(`${clause}, ${clause}, ${clause}, ${clause}.`);
    assert.ok(long.length >= 2, 'a run of 600 characters is cut');
    assert.ok(long.every((sentence) => sentence.text.length <= 400));
    assert.equal(long.map((sentence) => sentence.text).join(' '), `${clause}, ${clause}, ${clause}, ${clause}.`);
  });

  it('finds words as captions show them, Chinese by its dictionary, with where each begins', () => {
    assert.deepEqual(sentencesOf("It's 42 at example.com.")[0]!.words, [
      { text: "It's", index: 0 },
      { text: '42', index: 5 },
      { text: 'at', index: 8 },
      { text: 'example.com', index: 11 },
    ]);
    assert.deepEqual(
      sentencesOf('你好世界。', 'cmn')[0]!.words.map((word) => word.text),
      ['你好', '世界'],
    );
  });
});

describe('words placed within their sentence', () => {
  const words = sentencesOf('a bb cccc dd')[0]!.words;

  it('by their letters, without times of the engine', () => {
    const placed = placeWords(words, 10, 19);
    assert.deepEqual(
      placed.map((word) => [word.text, word.start, word.end]),
      [
        ['a', 10, 11],
        ['bb', 11, 13],
        ['cccc', 13, 17],
        ['dd', 17, 19],
      ],
    );
  });

  it("at the engine's starts, the words between two known starts sharing that time", () => {
    const placed = placeWords(words, 10, 20, [0, null, 16, 18]);
    assert.deepEqual(
      placed.map((word) => [word.start, word.end]),
      [
        [10, 12],
        [12, 16],
        [16, 18],
        [18, 20],
      ],
    );
  });

  it('never running backwards, nor out of the sentence', () => {
    const placed = placeWords(words, 10, 20, [0, 30, 12, 5]);
    for (const [i, word] of placed.entries()) {
      assert.ok(word.start >= 10 && word.end <= 20 && word.start <= word.end, JSON.stringify(word));
      if (i > 0) assert.equal(word.start, placed[i - 1]!.end);
    }
  });
});

describe("espeak-ng's voices and word events", () => {
  it('lists its voices, not those of mbrola, with their language as a canonical BCP 47 tag', () => {
    const listing = [
      'Pty Language       Age/Gender VoiceName          File                 Other Languages',
      ' 5  de              --/M      German             gmw/de               ',
      ' 6  de              --/F      german-mbrola-1    mb/mb-de1            ',
      ' 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)',
      ' 5  cmn             --/M      Chinese_(Mandarin) sit/cmn              (zh-cmn 5)(zh 5)',
    ].join('\n');
    assert.deepEqual(espeakVoicesOf(listing), [
      { name: 'de', language: 'de' },
      { name: 'en-us', language: 'en-US' },
      { name: 'cmn', language: 'zh' },
    ]);
  });

  it("takes a word's first event inside it, counting code points from 1 as espeak-ng does", () => {
    const sentence = sentencesOf('Größe 42 ok')[0]!;
    // "Größe" at 1, "42" read as two words at 7 and 8, nothing for "ok".
    const starts = wordStartsOf(
      sentence,
      [
        [1, 0],
        [7, 22050],
        [8, 33075],
      ],
      22050,
    );
    assert.deepEqual(starts, [0, 1, null]);
  });

  it("lists flite's voices from its filter's log", () => {
    assert.deepEqual(
      fliteVoicesOf('[Parsed_flite_0 @ 0x5608a9f19ec0] awb\n[Parsed_flite_0 @ 0x5608a9f19ec0] slt\n[lavfi @ 0x1] x'),
      ['awb', 'slt'],
    );
  });
});

describe('MEDIAFLOW_TTS_MODELS', () => {
  const hex = (c: string) => c.repeat(64);

  it('reads paths and URLs, each URL with a SHA-256 per file', () => {
    const [piper, kokoro] = parseTtsModels([
      'piper:amy=voices/en_US-amy-low.onnx',
      `kokoro:en=https://example.com/kokoro/#sha256=${hex('a')}+${hex('b')}+${hex('c')}`,
    ]);
    assert.deepEqual(piper, {
      engine: 'piper',
      name: 'amy',
      id: 'piper:amy',
      source: path.resolve('voices/en_US-amy-low.onnx'),
    });
    assert.deepEqual(
      kokoro!.files!.map((file) => [file.url, file.sha256[0]]),
      [
        ['https://example.com/kokoro/model.onnx', 'a'],
        ['https://example.com/kokoro/voices.bin', 'b'],
        ['https://example.com/kokoro/tokens.txt', 'c'],
      ],
    );
    const [lessac] = parseTtsModels([`piper:lessac=https://h/x.onnx#sha256=${hex('d')}+${hex('e')}`]);
    assert.deepEqual(
      lessac!.files!.map((file) => file.url),
      ['https://h/x.onnx', 'https://h/x.onnx.json'],
    );
  });

  it('refuses a malformed item, saying what one looks like', () => {
    const refused = (item: string, why: RegExp) =>
      assert.throws(
        () => parseTtsModels([item]),
        (error: MediaflowError) =>
          error.status === 400 && why.test(error.message) && /<engine>:<name>=/.test(error.message),
      );
    refused('amy=/x.onnx', /no <engine>:<name>=/);
    refused('festival:amy=/x.onnx', /unknown engine festival/);
    refused('piper:../up=/x.onnx', /the name \.\.\/up/);
    refused('piper:amy=https://h/x.onnx', /needs the SHA-256 of each of its files \(model\.onnx, model\.onnx\.json\)/);
    refused(`piper:amy=https://h/x.onnx#sha256=${hex('a')}`, /#sha256=<hex>\+<hex>/);
    assert.throws(() => parseTtsModels(['piper:a=/x', 'piper:a=/y']), /piper:a is named twice/);
  });
});

describe('ONNX model files', () => {
  it('reads a model metadata, the last value of a key winning, as onnxruntime reads it', async () => {
    const file = path.join(dir, 'meta.onnx');
    await writeFile(
      file,
      Buffer.concat([
        toneModel(),
        metadataEntries({ sample_rate: 16000, comment: 'x' }),
        metadataEntries({ comment: 'piper' }),
      ]),
    );
    assert.deepEqual(Object.fromEntries(await onnxMetadata(file)), { sample_rate: '16000', comment: 'piper' });
  });

  it('tells a file cut short, and one that is no model', async () => {
    const file = path.join(dir, 'cut.onnx');
    await writeFile(file, toneModel());
    await truncate(file, 500);
    await assert.rejects(
      onnxMetadata(file),
      (error: Error) => error instanceof ModelFileError && /cut short/.test(error.message),
    );
    await writeFile(file, 'RIFF....WAVEfmt not a model at all');
    await assert.rejects(
      onnxMetadata(file),
      (error: Error) => error instanceof ModelFileError && /not an ONNX model/.test(error.message),
    );
  });
});

describe("a Piper voice's config", () => {
  it("gives sherpa-onnx's metadata and tokens", () => {
    const config = readPiperConfig(JSON.stringify(toneConfig()));
    assert.equal(config.language, 'en-US');
    assert.deepEqual(config.metadata, {
      model_type: 'vits',
      comment: 'piper',
      language: 'en-US',
      voice: 'en-us',
      version: 1,
      has_espeak: 1,
      n_speakers: 1,
      sample_rate: 16000,
    });
    assert.match(config.tokens, /^_ 0\n\^ 1\n\$ 2\n {2}3\n/);
  });

  it('refuses one that lacks what sherpa-onnx needs', () => {
    const without = (change: (config: Record<string, unknown>) => void) => {
      const config = toneConfig();
      change(config);
      return JSON.stringify(config);
    };
    assert.throws(() => readPiperConfig('{'), /not JSON/);
    assert.throws(() => readPiperConfig(without((c) => delete c.audio)), /no audio\.sample_rate/);
    assert.throws(() => readPiperConfig(without((c) => (c.phoneme_type = 'pinyin'))), /pinyin/);
    assert.throws(
      () => readPiperConfig(without((c) => delete (c.phoneme_id_map as Record<string, unknown>)['^'])),
      /lacks \^/,
    );
  });
});
