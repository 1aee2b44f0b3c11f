import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { glyphWarnings, missingGlyphs } from '../../../src/engine/subtitles/missing-glyphs.js';

describe('missing-glyphs: what libass could not draw', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-glyphs-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads the code points from ffmpeg's own log, each once, in order", async () => {
    // Private-use characters no font has, beside Japanese that the installed fonts draw.
    await writeFile(
      path.join(dir, 'subs.srt'),
      '1\n00:00:00,000 --> 00:00:01,000\n日本 \uE001\uE000 \uE001 \u{10FFFD}\n',
    );
    const { stderr } = await execa(
      'ffmpeg',
      [
        '-hide_banner',
        '-nostdin',
        '-loglevel',
        'warning',
        '-f',
        'lavfi',
        '-i',
        'color=c=black:size=320x180:rate=5:duration=1',
        '-vf',
        'subtitles=filename=subs.srt',
        '-f',
        'null',
        '-',
      ],
      { cwd: dir },
    );
    assert.deepEqual(missingGlyphs(stderr), [0xe001, 0xe000, 0x10fffd]);
    assert.deepEqual(missingGlyphs(''), []);
    // libass's other reports: a glyph it then found under another character map, or in a fallback font.
    assert.deepEqual(
      missingGlyphs(
        'Glyph 0x1F600 not found, broken font? Trying all charmaps\nGlyph 0x65E5 not found, selecting one ' +
          'more font for (Arial, 400, 0)\n',
      ),
      [],
    );
    assert.deepEqual(
      missingGlyphs('[Parsed_ass_0 @ 0x55] Glyph 0x65E5 not found in font for (Arial, 400, 0)\n'),
      [0x65e5],
    );
  });

  it('says which characters render as boxes and which package draws them', () => {
    assert.deepEqual(glyphWarnings([]), []);
    assert.deepEqual(glyphWarnings([0x65e5, 0x672c, 0x1f600, 0x0915, 0xe000, 0xac00]), [
      'No font has glyphs for U+65E5, U+672C, U+AC00: they render as empty boxes; install fonts-noto-cjk',
      'No font has glyphs for U+1F600: they render as empty boxes; install fonts-symbola',
      'No font has glyphs for U+0915: they render as empty boxes; install fonts-noto-core',
      'No font has glyphs for U+E000: they render as empty boxes; they are private-use characters, which only ' +
        'a font made for them draws',
    ]);
    const many = Array.from({ length: 15 }, (_, i) => 0x4e00 + i);
    assert.equal(
      glyphWarnings(many)[0],
      'No font has glyphs for U+4E00, U+4E01, U+4E02, U+4E03, U+4E04, U+4E05, U+4E06, U+4E07, U+4E08, U+4E09, ' +
        'U+4E0A, U+4E0B and 3 more: they render as empty boxes; install fonts-noto-cjk',
    );
  });
});
