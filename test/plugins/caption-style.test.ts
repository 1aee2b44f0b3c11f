import assert from 'node:assert/strict';
import { describe, it } from '../helpers/lifecycle.js';
import { closeFonts, parseFamilies } from '../../src/engine/subtitles/fonts.js';
import { assColour, assText, scriptGeometry } from '../../src/plugins/captions/ass-script.js';
import { restyle } from '../../src/plugins/captions/caption-style.js';

const FORMAT =
  'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, ' +
  'Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, ' +
  'MarginR, MarginV, Encoding';
const SCRIPT = [
  '[Script Info]',
  'PlayResX: 640',
  'PlayResY: 360',
  'ScaledBorderAndShadow: yes',
  '',
  '[V4+ Styles]',
  FORMAT,
  'Style: Default,DejaVu Sans,36,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,1,10,10,10,1',
  'Style: Sign,DejaVu Serif,20,&H0000FFFF,&H000000FF,&H00000000,&H00000000,-1,0,0,0,100,100,0,0,1,1,0,9,10,10,10,1',
  '',
  '[Events]',
  'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
  'Dialogue: 0,0:00:00.00,0:00:02.00,Sign,,0,0,0,,Style: not a style line, {\\an8}kept',
  '',
].join('\r\n');

describe('caption styles on ASS scripts', () => {
  it('leaves a script byte for byte when no field is given', () => {
    assert.equal(restyle(SCRIPT, {}, 360), SCRIPT);
  });

  it('sets only the given fields on every style, in script units, keeping columns, CRLF and events', () => {
    const out = restyle(SCRIPT, { font_size: 90, color: '#FF8000', position: 'top', max_width: 0.5 }, 360);
    const styles = out.split('\r\n').filter((line) => line.startsWith('Style: '));
    // 90 px of 1080 is 30 units of 360; the margins leave half of 640 in the middle.
    assert.deepEqual(styles, [
      'Style: Default,DejaVu Sans,30,&H000080FF,&H000080FF,&H00000000,&H00000000,' +
        '0,0,0,0,100,100,0,0,1,2,0,7,160,160,10,1',
      'Style: Sign,DejaVu Serif,30,&H000080FF,&H000080FF,&H00000000,&H00000000,' +
        '-1,0,0,0,100,100,0,0,1,1,0,9,160,160,10,1',
    ]);
    assert.ok(out.endsWith('Dialogue: 0,0:00:00.00,0:00:02.00,Sign,,0,0,0,,Style: not a style line, {\\an8}kept\r\n'));
  });

  it('a background is a box (border style 3) in that colour; outlines follow ScaledBorderAndShadow', () => {
    const [line] = restyle(SCRIPT, { background: '#10203080', outline: 9 }, 720)
      .split('\r\n')
      .filter((l) => l.startsWith('Style: '));
    assert.equal(
      line,
      'Style: Default,DejaVu Sans,36,&H00FFFFFF,&H000000FF,&H7F302010,&H7F302010,' +
        '0,0,0,0,100,100,0,0,3,3,0,1,10,10,10,1',
    );
    const unscaled = SCRIPT.replace('ScaledBorderAndShadow: yes', 'ScaledBorderAndShadow: no');
    assert.match(restyle(unscaled, { outline: 9 }, 720), /,1,6,0,1,10,10,10,1\r\n/);
  });

  it('completes a missing PlayRes as libass does, and reads colours and text safely', () => {
    assert.deepEqual(scriptGeometry('[Script Info]\nTitle: x\n'), {
      playResX: 384,
      playResY: 288,
      scaledBorders: false,
    });
    assert.deepEqual(scriptGeometry('[Script Info]\nPlayResY: 720\n'), {
      playResX: 960,
      playResY: 720,
      scaledBorders: false,
    });
    assert.equal(assColour('#112233'), '&H00332211');
    assert.equal(assColour('#112233FF'), '&H00332211');
    assert.equal(assColour('#11223300'), '&HFF332211');
    assert.equal(assText('a{\\b1}\\N'), 'a\\{\\\u2060b1\\}\\\u2060N');
  });
});

describe('installed font families', () => {
  it('reads every name of each font, unescapes commas, and drops names unsafe in a style line', () => {
    const output = 'Noto Sans\nDejaVu Sans,DejaVu Sans Condensed\nOdd\\, Name\nBad{Font}\nNoto Sans\n';
    assert.deepEqual(parseFamilies(output), ['DejaVu Sans', 'DejaVu Sans Condensed', 'Noto Sans']);
  });

  it('suggests families that differ in case, spacing or a few letters, or contain the name', () => {
    const families = ['DejaVu Sans', 'Noto Sans', 'Noto Sans CJK JP', 'Noto Serif', 'Symbola'];
    assert.deepEqual(closeFonts('Noto Sanz', families), ['Noto Sans']);
    assert.deepEqual(closeFonts('Noto Serf', families), ['Noto Serif']);
    assert.deepEqual(closeFonts('notosans', families).slice(0, 2), ['Noto Sans', 'Noto Sans CJK JP']);
    assert.deepEqual(closeFonts('Arial}{\\fnX', families), []);
  });
});
