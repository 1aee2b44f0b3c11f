import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';

/** `HH:MM:SS,mmm`, written here independently of the plugin's own formatter. */
function time(seconds: number): string {
  const hh = Math.floor(seconds / 3600);
  const mm = Math.floor((seconds % 3600) / 60);
  const ss = seconds % 60;
  return `${String(hh).padStart(2, '0')}:${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')},000`;
}

/** The SRT document expected for these cue texts, each lasting `seconds`. */
function expectedSrt(lines: string[], seconds: number): string {
  return lines.map((line, i) => `${i + 1}\n${time(i * seconds)} --> ${time((i + 1) * seconds)}\n${line}\n`).join('\n');
}

const URL_SHAPE =
  /^http:\/\/127\.0\.0\.1:\d+\/uploads\/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\/generated_subtitles\.srt$/;

describe('generate-subtitles', () => {
  let server: TestServer;

  before(async () => {
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
  });

  /** POSTs, expects success, and returns the URL and the produced file's bytes. */
  async function generate(fields: Record<string, string>): Promise<{ url: string; bytes: Buffer; text: string }> {
    const res = await server.post('/generate-subtitles/', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['message', 'subtitle_file_url']);
    assert.equal(res.body.message, 'Subtitle file generated successfully');
    const url = res.body.subtitle_file_url!;
    assert.ok(url.startsWith(`${server.base}/uploads/`), url);
    assert.match(url, URL_SHAPE);
    const bytes = await readFile(server.pathOf(url));
    // Valid UTF-8, no byte-order mark.
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    assert.notEqual(text.charCodeAt(0), 0xfeff);
    return { url, bytes, text };
  }

  it('writes cues of 8 words lasting 3 seconds by default, as an SRT file served over HTTP', async () => {
    const words = Array.from({ length: 20 }, (_, i) => `word${i + 1}`);
    const { url, bytes, text } = await generate({ text: words.join(' ') });
    assert.equal(
      text,
      '1\n00:00:00,000 --> 00:00:03,000\nword1 word2 word3 word4 word5 word6 word7 word8\n\n' +
        '2\n00:00:03,000 --> 00:00:06,000\nword9 word10 word11 word12 word13 word14 word15 word16\n\n' +
        '3\n00:00:06,000 --> 00:00:09,000\nword17 word18 word19 word20\n',
    );
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-subrip; charset=utf-8$/i);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('holds at most words_per_line words per cue and ends a cue early at . ! ? …', async () => {
    const { text } = await generate({
      text: 'Hello there. How are you doing on this fine day? Great! Well… the quick brown fox jumps over the lazy dog',
      words_per_line: '4',
      seconds_per_line: '2',
    });
    const lines = [
      'Hello there.',
      'How are you doing',
      'on this fine day?',
      'Great!',
      'Well…',
      'the quick brown fox',
      'jumps over the lazy',
      'dog',
    ];
    assert.equal(text, expectedSrt(lines, 2));
    for (const cue of text.split('\n\n')) {
      const [, , line, ...rest] = cue.trimEnd().split('\n');
      assert.deepEqual(rest, [], 'one text line per cue');
      assert.ok(line!.split(' ').length <= 4, line);
    }
  });

  it('counts time past one hour: seconds_per_line 3600, and hundreds of short cues', async () => {
    const long = await generate({ text: 'one two three', words_per_line: '1', seconds_per_line: '3600' });
    assert.equal(
      long.text,
      '1\n00:00:00,000 --> 01:00:00,000\none\n\n2\n01:00:00,000 --> 02:00:00,000\ntwo\n\n3\n02:00:00,000 --> ' +
        '03:00:00,000\nthree\n',
    );

    const words = Array.from({ length: 600 }, (_, i) => `w${i + 1}`);
    const many = await generate({ text: words.join(' '), words_per_line: '1', seconds_per_line: '7' });
    assert.equal(many.text, expectedSrt(words, 7));
    // Cue 515 straddles the hour; the last one ends at 1 h 10 min.
    assert.ok(
      many.text.includes('\n\n515\n00:59:58,000 --> 01:00:05,000\nw515\n\n516\n01:00:05,000 --> 01:00:12,000\nw516\n'),
    );
    assert.ok(many.text.endsWith('\n\n600\n01:09:53,000 --> 01:10:00,000\nw600\n'));

    // ffmpeg's SRT reader agrees: 600 events, the last at 4193 s lasting 7 s.
    const { stdout } = await execa('ffprobe', [
      '-v',
      'error',
      '-f',
      'srt',
      '-show_entries',
      'packet=pts_time,duration_time',
      '-of',
      'json',
      server.pathOf(many.url),
    ]);
    const packets = (JSON.parse(stdout) as { packets: Array<{ pts_time: string; duration_time: string }> }).packets;
    assert.equal(packets.length, 600);
    assert.equal(Number(packets.at(-1)!.pts_time), 4193);
    assert.equal(Number(packets.at(-1)!.duration_time), 7);
  });

  it('keeps accents, combining marks, CJK and emoji byte for byte', async () => {
    // "café" twice: precomposed é, then e + combining acute (must not be normalised).
    const input = 'Ça va très bien, café cafe\u0301. 你好，世界。 naïve Zoë 🎉👍🏽 👨‍👩‍👧 done';
    const { bytes, text } = await generate({ text: input, words_per_line: '3' });
    const lines = ['Ça va très', 'bien, café cafe\u0301.', '你好，世界。', 'naïve Zoë 🎉👍🏽', '👨‍👩‍👧 done'];
    assert.deepEqual(bytes, Buffer.from(expectedSrt(lines, 3), 'utf8'));
    assert.ok(bytes.includes(Buffer.from('cafe\u0301', 'utf8')));
    assert.ok(bytes.includes(Buffer.from([0xf0, 0x9f, 0x8e, 0x89])), '🎉 as its four UTF-8 bytes');
    assert.ok(text.includes('你好，世界。'));
  });

  it('cuts Japanese and Thai, written without spaces, into several cues of a few words each', async () => {
    // 62 Japanese characters and 94 Thai ones, with no space and no full stop: one cue each before words were counted.
    const japanese =
      'きょうは天気がとてもよかったので友だちと一緒に公園まで歩いて行きそれから駅前の喫茶店でコーヒーを飲みながら長い時間話しました';
    const thai = 'วันนี้อากาศดีมากเราจึงไปเดินเล่นที่สวนสาธารณะกับเพื่อนแล้วก็ไปกินข้าวที่ร้านอาหารใกล้สถานีรถไฟ';
    const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
    const wordCount = (cue: string) => [...segmenter.segment(cue)].filter((s) => s.isWordLike).length;
    for (const [text, fewest, longest] of [
      [japanese, 4, 20],
      [thai, 3, 40],
    ] as const) {
      const { text: srt } = await generate({ text });
      const lines = srt
        .trimEnd()
        .split('\n\n')
        .map((cue) => cue.split('\n')[2]!);
      assert.equal(srt, expectedSrt(lines, 3), 'numbered cues of 3 seconds, one text line each');
      assert.ok(lines.length >= fewest, `${lines.length} cues: ${JSON.stringify(lines)}`);
      // Every character kept, in order, and no space added between words that had none.
      assert.equal(lines.join(''), text);
      for (const line of lines) {
        assert.ok(wordCount(line) <= 8, `at most 8 words: ${line}`);
        assert.ok(line.length >= 4 && line.length <= longest, `a cue of sensible length: ${line}`);
      }
    }
    const { text: srt } = await generate({ text: '吾輩は猫である。名前はまだ無い。', words_per_line: '3' });
    assert.equal(srt, expectedSrt(['吾輩は猫', 'である。', '名前はまだ', '無い。'], 3));
  });

  it(
    'refuses empty or whitespace-only text, and bad words_per_line / seconds_per_line, with a 400 naming the ' +
      'parameter',
    async () => {
      for (const text of ['', '   ', '\n\t \r\n']) {
        const res = await server.post('/generate-subtitles/', { text });
        assert.equal(res.status, 400, JSON.stringify(text));
        assert.match(res.body.error!, /`text`/);
      }
      const missing = await server.post('/generate-subtitles/', { words_per_line: '3' });
      assert.equal(missing.status, 400);
      assert.match(missing.body.error!, /`text`/);
      for (const [field, value] of [
        ['words_per_line', '0'],
        ['words_per_line', 'abc'],
        ['words_per_line', '2.5'],
        ['words_per_line', '-3'],
        ['seconds_per_line', '0'],
        ['seconds_per_line', 'three'],
        ['seconds_per_line', '1e3'],
      ] as const) {
        const res = await server.post('/generate-subtitles/', { text: 'some words here', [field]: value });
        assert.equal(res.status, 400, `${field}=${value}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(Object.keys(res.body), ['error', 'code']);
        assert.equal(res.body.code, 'MF_ERR_PARAM');
        assert.ok(res.body.error!.includes(`\`${field}\``), res.body.error);
        assert.ok(res.body.error!.includes(value), `the error shows the value given: ${res.body.error}`);
      }
      assert.deepEqual(await server.workLeftovers(), []);
    },
  );
});
