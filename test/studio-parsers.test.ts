import assert from 'node:assert/strict';
import { clipAt, JsonSyntaxError, mapJson, parentPath, pathAt, problemRange } from '../studio/src/json-map.js';
import { EventStreamParser } from '../studio/src/sse.js';
import { framePlaces } from '../studio/src/storyboard.js';
import { describe, it } from './helpers/lifecycle.js';

/** The studio page's two parsers, which need no browser: JSON with where each value is, and Server-Sent Events. */

const TEXT = `{
  "tracks": [
    { "clips": [ { "type": "image", "src": "a.jpg", "duration": 2 }, { "type": "text", "text": "Hi" } ] }
  ],
  "merge": { "odd key": "x", "TITLE": null }
}`;

describe('the studio: JSON mapped to the paths errors name', () => {
  const mapped = mapJson(TEXT);
  const at = (path: string) => {
    const span = mapped.spans.get(path)!;
    return TEXT.slice(span.from, span.to);
  };

  it('reads the value as JSON.parse does, and finds each value by its path', () => {
    assert.deepEqual(mapped.value, JSON.parse(TEXT));
    assert.equal(at('tracks[0].clips[0].src'), '"a.jpg"');
    assert.equal(at('tracks[0].clips[0].duration'), '2');
    assert.equal(at('tracks[0].clips[1]'), '{ "type": "text", "text": "Hi" }');
    assert.equal(at('merge["odd key"]'), '"x"');
    assert.equal(at('merge.TITLE'), 'null');
    assert.equal(at(''), TEXT);
    const key = mapped.spans.get('tracks[0].clips[1].text')!.key!;
    assert.equal(TEXT.slice(key.from, key.to), '"text"');
  });

  it('underlines a missing field at the nearest value that is there, and tells the clip of a path', () => {
    const range = problemRange(mapped, 'tracks[0].clips[1].duration');
    assert.equal(TEXT.slice(range.from, range.to), '{');
    assert.equal(range.from, mapped.spans.get('tracks[0].clips[1]')!.from);
    const member = problemRange(mapped, 'merge.MISSING');
    assert.equal(TEXT.slice(member.from, member.to), '"merge"');
    assert.deepEqual(problemRange(mapped, '"no such"'), { from: 0, to: 1 });
    assert.equal(parentPath('tracks[0].clips[1].src'), 'tracks[0].clips[1]');
    assert.equal(parentPath('merge["odd key"]'), 'merge');
    assert.equal(parentPath('tracks'), '');
    assert.deepEqual(clipAt('tracks[3].clips[12].transition.type'), { track: 3, index: 12 });
    assert.equal(clipAt('merge.TITLE'), undefined);
  });

  it('tells the innermost value at a position, by its key too', () => {
    assert.equal(pathAt(mapped, TEXT.indexOf('a.jpg')), 'tracks[0].clips[0].src');
    assert.equal(pathAt(mapped, TEXT.indexOf('"duration"') + 2), 'tracks[0].clips[0].duration');
    assert.equal(pathAt(mapped, TEXT.indexOf('{ "type": "text"')), 'tracks[0].clips[1]');
    assert.equal(pathAt(mapped, 0), '');
  });

  it('says where text is not JSON', () => {
    for (const [text, where, message] of [
      ['{"a": 1,}', 8, /expected a key in double quotes, found '}' \(line 1\)/],
      ['{"a": [1 2]}', 9, /expected ',' or '\]'/],
      ['{\n"a": tru}', 7, /expected a value, found 't' \(line 2\)/],
      ['{"a": 1} x', 9, /expected the end of the document/],
      ['"unterminated', 0, /a string ending with a double quote/],
      ['', 0, /found the end/],
    ] as const) {
      assert.throws(
        () => mapJson(text),
        (error: unknown) => error instanceof JsonSyntaxError && error.pos === where && message.test(error.message),
        text,
      );
    }
  });
});

describe('the studio: Server-Sent Events from a fetched body', () => {
  it('gives the data of each event, however the stream is cut, and skips comments', () => {
    const parser = new EventStreamParser();
    const stream =
      ': keep-alive\n\ndata: {"progress":1}\n\ndata: {"progress":\r\ndata: 2}\r\n\r\ndata:{"progress":3}\r\r\n';
    const events: string[] = [];
    for (const char of stream) events.push(...parser.push(char));
    assert.deepEqual(events, ['{"progress":1}', '{"progress":\n2}', '{"progress":3}']);
    assert.deepEqual(new EventStreamParser().push('data: {"a":1}\n\ndata: {"b"'), ['{"a":1}']);
  });
});

describe("the studio: each clip's frame on the storyboard", () => {
  it('finds frames where docs/render.md lays them: a row per track that draws, placed by midpoint', () => {
    const clip = (track: number, index: number, type: string, start: number, end: number) =>
      ({ track, index, type, start, end }) as const;
    const places = framePlaces(
      {
        duration: 10,
        width: 640,
        height: 360,
        clips: [
          clip(0, 0, 'image', 0, 4),
          clip(0, 1, 'video', 4, 10),
          clip(1, 0, 'audio', 0, 10),
          // Past the output's end: its midpoint is that of what shows, 0 to 10.
          clip(2, 0, 'text', 0, 12),
          clip(3, 0, 'image', 10, 11),
        ],
      },
      640,
    );
    // A 640x360 output's frame is 160x90; 640 - 2 x 16 - 160 = 448 pixels for 10 s, 44.8 a second.
    const frame = { width: 160, height: 90 };
    assert.deepEqual(
      [...places],
      [
        ['0:0', { x: 16 + 90, y: 16, ...frame }],
        ['0:1', { x: 16 + 314, y: 16, ...frame }],
        // The sound's track has no row: the text's is the second, a frame and its times (20) and a gap (12) down.
        ['2:0', { x: 16 + 224, y: 16 + 90 + 20 + 12, ...frame }],
      ],
    );
  });
});
