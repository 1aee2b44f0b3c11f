import assert from 'node:assert/strict';
import { link, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import iconv from 'iconv-lite';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { decodeSubtitle, detectEncoding, subtitleToUtf8 } from '../../../src/engine/subtitles/subtitle-encoding.js';
import { TextWorkers } from '../../../src/engine/subtitles/text-workers.js';

const srt = (text: string) =>
  `1\n00:00:00,000 --> 00:00:02,000\n${text}\n\n2\n00:00:02,000 --> 00:00:04,000\n${text}\n`;

describe('subtitle-encoding: detectEncoding, decodeSubtitle, subtitleToUtf8', () => {
  const workers = new TextWorkers(1);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-encoding-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('tells byte-order marks, UTF-8 and legacy code pages apart, and decodes each to the same text', () => {
    const cases: Array<[string, string, Buffer]> = [
      ['utf-8', 'Grüße 日本語', Buffer.from(srt('Grüße 日本語'))],
      ['utf-8', 'Grüße 日本語', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(srt('Grüße 日本語'))])],
      [
        'utf-16le',
        'Grüße 日本語',
        Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(srt('Grüße 日本語'), 'utf-16le')]),
      ],
      [
        'utf-16be',
        'Grüße 日本語',
        Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(srt('Grüße 日本語'), 'utf-16be')]),
      ],
      [
        'utf-32le',
        'Grüße 🎉',
        Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), iconv.encode(srt('Grüße 🎉'), 'utf-32le', { addBOM: false })]),
      ],
      // ISO-8859-1 is read as Windows-1252, as browsers do: the same letters, plus curly quotes and dashes.
      [
        'windows-1252',
        'Ça va très bien — “naïve” café €',
        iconv.encode(srt('Ça va très bien — “naïve” café €'), 'windows-1252'),
      ],
      ['windows-1252', 'Überall schön, Grüße aus Köln', iconv.encode(srt('Überall schön, Grüße aus Köln'), 'latin1')],
      [
        'shift_jis',
        '日本語の字幕です。こんにちは、世界。',
        iconv.encode(srt('日本語の字幕です。こんにちは、世界。'), 'shift_jis'),
      ],
      ['gb18030', '你好世界，这是中文字幕。', iconv.encode(srt('你好世界，这是中文字幕。'), 'gb18030')],
      [
        'big5',
        '你好世界，這是中文字幕。我們今天去公園。',
        iconv.encode(srt('你好世界，這是中文字幕。我們今天去公園。'), 'big5'),
      ],
      [
        'euc-kr',
        '안녕하세요 세계, 한국어 자막입니다.',
        iconv.encode(srt('안녕하세요 세계, 한국어 자막입니다.'), 'euc-kr'),
      ],
      [
        'windows-1251',
        'Привет мир, это русские субтитры.',
        iconv.encode(srt('Привет мир, это русские субтитры.'), 'windows-1251'),
      ],
      [
        'windows-1256',
        'مرحبا بالعالم هذه ترجمة عربية',
        iconv.encode(srt('مرحبا بالعالم هذه ترجمة عربية'), 'windows-1256'),
      ],
      ['koi8-r', 'Привет мир, это русские субтитры.', iconv.encode(srt('Привет мир, это русские субтитры.'), 'koi8-r')],
    ];
    for (const [encoding, text, bytes] of cases) {
      assert.equal(detectEncoding(bytes)?.encoding, encoding, `${text} in ${encoding}`);
      assert.deepEqual(decodeSubtitle(bytes), { text: srt(text), wasUtf8: encoding === 'utf-8' && bytes[0] !== 0xef });
    }
  });

  it('finds no encoding for binary data, or for UTF-16 without its byte-order mark', () => {
    let state = 7;
    const random = Buffer.from(
      Array.from({ length: 4000 }, () => ((state = (state * 1103515245 + 12345) % 2 ** 31) >> 16) & 0xff),
    );
    assert.equal(decodeSubtitle(random), undefined);
    assert.equal(decodeSubtitle(Buffer.from('1\n00:00:00,000 --> 00:00:02,000\nnul\0inside\n')), undefined);
    assert.equal(decodeSubtitle(iconv.encode(srt('Hello world'), 'utf-16le', { addBOM: false })), undefined);
  });

  it(
    'rewrites a file in UTF-8 under its name without touching the file it was linked from; ' + 'leaves UTF-8 alone',
    async () => {
      const original = path.join(dir, 'original.srt');
      const input = path.join(dir, 'in0.srt');
      const bytes = iconv.encode(srt('Ça va très bien — “naïve” café'), 'windows-1252');
      await writeFile(original, bytes);
      await link(original, input);
      assert.equal(await subtitleToUtf8(workers, input, 'http://127.0.0.1/x.srt'), undefined);
      assert.equal(await readFile(input, 'utf8'), srt('Ça va très bien — “naïve” café'));
      assert.deepEqual(await readFile(original), bytes, 'the cached or user file keeps its bytes');

      const garbage = path.join(dir, 'in1.srt');
      await writeFile(garbage, Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0x80]));
      const error = await subtitleToUtf8(workers, garbage, 'http://127.0.0.1/g.srt');
      assert.equal(error?.status, 422);
      assert.equal(
        error?.message,
        'Input http://127.0.0.1/g.srt is not a subtitle file: its character encoding could not be detected ' +
          '(binary data, or text in an unknown encoding)',
      );
    },
  );

  it(
    'strips embedded fonts and graphics from an ASS input, keeping its styles and events; SRT text is ' + 'left alone',
    async () => {
      const script = [
        '[Script Info]',
        'ScriptType: v4.00+',
        '',
        '[Fonts]',
        'fontname: evil_0.ttf',
        '!"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`',
        '[notasection]',
        'M<V5N:6%L',
        '',
        '[V4+ Styles]',
        'Format: Name, Fontname, Fontsize',
        'Style: Default,DejaVu Sans,36',
        '',
        '[Graphics]',
        'filename: logo.png',
        'M8E!.1PT*&@H',
        '',
        '[Events]',
        'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
        'Dialogue: 0,0:00:00.00,0:00:02.00,Default,,0,0,0,,[Fonts] stays as event text',
        '',
      ].join('\n');
      const input = path.join(dir, 'in2.ass');
      await writeFile(input, script);
      assert.equal(await subtitleToUtf8(workers, input, 'http://127.0.0.1/x.ass'), undefined);
      const cleaned = await readFile(input, 'utf8');
      assert.equal(
        cleaned,
        [
          '[Script Info]',
          'ScriptType: v4.00+',
          '',
          '[V4+ Styles]',
          'Format: Name, Fontname, Fontsize',
          'Style: Default,DejaVu Sans,36',
          '',
          '[Events]',
          'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
          'Dialogue: 0,0:00:00.00,0:00:02.00,Default,,0,0,0,,[Fonts] stays as event text',
          '',
        ].join('\n'),
      );
      const subrip = path.join(dir, 'in3.srt');
      await writeFile(subrip, srt('[Fonts]'));
      assert.equal(await subtitleToUtf8(workers, subrip, 'http://127.0.0.1/x.srt'), undefined);
      assert.equal(await readFile(subrip, 'utf8'), srt('[Fonts]'));
    },
  );
});
