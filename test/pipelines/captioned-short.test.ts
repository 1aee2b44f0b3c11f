import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from '../helpers/lifecycle.js';
import { useOperation } from '../helpers/operation.js';
import { fixtures } from '../helpers/fixtures.js';
import { frameRgb, probe, videoOf } from '../helpers/media.js';

const PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');
type Frame = Awaited<ReturnType<typeof frameRgb>>;

/** Pixels of the caption: white text and the gold highlight (the red picture has no green, the bars are black). */
function caption(frame: Frame): { all: Array<{ x: number; y: number }>; gold: Array<{ x: number; y: number }> } {
  const all = [];
  const gold = [];
  for (let y = 0; y < frame.height; y += 2)
    for (let x = 0; x < frame.width; x += 2) {
      const [r, g, b] = frame.pixel(x, y);
      if (r > 200 && g > 150 && b < 90) gold.push({ x, y });
      if (g > 150) all.push({ x, y });
    }
  return { all, gold };
}

describe('pipeline captioned-short', () => {
  const op = useOperation({
    fixtures: ['red-640x360.jpg', 'tone-3s-44k-stereo.mp3'],
    env: { MEDIAFLOW_PIPELINES_DIR: PIPELINES },
  });

  // The first cue is three words over 2 s: at 0.3 s the first word is highlighted, at 1.6 s the third.
  for (const [language, text] of [
    ['English', 'Every word lights up in turn.'],
    ['Japanese', 'これは日本語の字幕です。'],
  ]) {
    it(
      `runs over HTTP with a ${language} text: a 720x1280 short, big centred captions, the highlight moving ` +
        `word by word`,
      async () => {
        const res = await fetch(`${op.server.base}/pipelines/captioned-short/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            text,
            images: [op.files.url('/f/red-640x360.jpg')],
            voice: op.files.url('/f/tone-3s-44k-stereo.mp3'),
          }),
        });
        const body = (await res.json()) as { message: string; outputs: Record<string, string> };
        assert.equal(res.status, 200, JSON.stringify(body));
        const short = op.server.pathOf(body.outputs.short!);
        const video = videoOf(await probe(short))!;
        assert.deepEqual([video.width, video.height], [720, 1280]);
        const [early, late] = await Promise.all([frameRgb(short, 0.3), frameRgb(short, 1.6)]);
        const [first, third] = [caption(early), caption(late)];
        for (const { all, gold } of [first, third]) {
          assert.ok(gold.length > 100, `a highlighted word (${gold.length} pixels)`);
          const xs = all.map((p) => p.x);
          const ys = all.map((p) => p.y);
          // Centred: in the middle of the frame across, and in its middle third down.
          assert.ok(
            Math.abs((Math.min(...xs) + Math.max(...xs)) / 2 - 360) < 40,
            `centred across: ${Math.min(...xs)}..${Math.max(...xs)}`,
          );
          assert.ok(
            Math.min(...ys) > 427 && Math.max(...ys) < 853,
            `in the middle third: ${Math.min(...ys)}..${Math.max(...ys)}`,
          );
          // Big: a line of text at least 60 pixels high.
          assert.ok(Math.max(...ys) - Math.min(...ys) > 60, `big: ${Math.max(...ys) - Math.min(...ys)} px high`);
        }
        // The highlight left the first word's box (a long line wraps: the third word may sit below it).
        const box = {
          x0: Math.min(...first.gold.map((p) => p.x)),
          x1: Math.max(...first.gold.map((p) => p.x)),
          y0: Math.min(...first.gold.map((p) => p.y)),
          y1: Math.max(...first.gold.map((p) => p.y)),
        };
        const inBox = (p: { x: number; y: number }) => p.x >= box.x0 && p.x <= box.x1 && p.y >= box.y0 && p.y <= box.y1;
        assert.equal(third.gold.filter(inBox).length, 0, 'the first word is no longer highlighted');
        const later = (p: { x: number; y: number }) => p.y > box.y1 || (p.y >= box.y0 && p.x > box.x1);
        assert.ok(
          third.gold.filter(later).length > third.gold.length * 0.9,
          'a later word is highlighted (to the right, or on a line below)',
        );
      },
    );
  }

  it(
    'draws the Japanese captions with real glyphs: add-subtitles reports no missing characters for the ASS it ' +
      'generates',
    async () => {
      const subs = await op.server.post('/generate-subtitles/', {
        text: 'これは日本語の字幕です。',
        format: 'ass',
        highlight: 'word',
        font_size: '90',
        bold: 'true',
        position: 'middle',
      });
      assert.equal(subs.status, 200, JSON.stringify(subs.body));
      await fixtures('black-8s-640x360-silent.mp4');
      const burned = await op.server.post('/add-subtitles/', {
        video_url: op.files.url('/f/black-8s-640x360-silent.mp4'),
        subtitle_url: subs.body.subtitle_file_url!,
      });
      assert.equal(burned.status, 200, JSON.stringify(burned.body));
      assert.equal(burned.body.warnings, undefined);
    },
  );
});
