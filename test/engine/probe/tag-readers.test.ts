import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, it, before, after } from '../../helpers/lifecycle.js';
import { runFfprobe } from '../../../src/engine/exec/ffmpeg.js';
import { id3Tags } from '../../../src/engine/probe/id3-tags.js';
import { mpegAudioFacts } from '../../../src/engine/probe/mpeg-audio.js';
import { waveFacts } from '../../../src/engine/probe/wave-audio.js';
import { factsFromProbe, probeFile } from '../../../src/engine/probe/probe.js';

/** An ID3v2 size or frame size: four bytes of seven bits. */
const syncsafe = (n: number) => Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
const plain = (n: number) => Buffer.from([n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);

type Frame = [id: string, body: Buffer, flags?: number];

/** An ID3v2 tag of `version` (3 or 4) holding `frames`. */
function id3(version: number, frames: Frame[], flags = 0): Buffer {
  const body = Buffer.concat(
    frames.map(([id, data, frameFlags = 0]) =>
      Buffer.concat([
        Buffer.from(id, 'latin1'),
        version === 4 ? syncsafe(data.length) : plain(data.length),
        Buffer.from([0, frameFlags]),
        data,
      ]),
    ),
  );
  return Buffer.concat([Buffer.from([0x49, 0x44, 0x33, version, 0, flags]), syncsafe(body.length), body]);
}

const utf8 = (...parts: string[]) => Buffer.concat([Buffer.from([3]), Buffer.from(parts.join('\0'), 'utf8')]);
const latin1 = (text: string) => Buffer.concat([Buffer.from([0]), Buffer.from(text, 'latin1')]);
const utf16 = (text: string, bigEndian = false) => {
  const units = Buffer.from(`\uFEFF${text}`, 'utf16le');
  if (bigEndian) units.swap16();
  return Buffer.concat([Buffer.from([1]), units]);
};
const comment = (description: string, text: string) =>
  Buffer.concat([Buffer.from([3]), Buffer.from('eng'), Buffer.from(`${description}\0${text}`, 'utf8')]);

/** ID3 tags read in process, each checked against ffprobe on an MP3 that starts with it. */
const READ: Array<{ name: string; tag: Buffer }> = [
  {
    name: 'v2.4 text, a user-defined text, comments with and without a description, a repeated frame',
    tag: id3(4, [
      ['TIT2', utf8('Título')],
      ['TXXX', utf8('mood', 'calm')],
      ['COMM', comment('', 'Nice')],
      ['COMM', comment('note', 'Later')],
      ['TPE1', utf8('First')],
      ['TPE1', utf8('Second')],
      ['TCON', utf8('Rock')],
      ['TBPM', utf8('120')],
      ['TALB', utf8('')],
    ]),
  },
  {
    name: 'v2.3 UTF-16 with byte order marks',
    tag: id3(3, [
      ['TIT2', utf16('Grüße')],
      ['TPE1', utf16('Ünal', true)],
    ]),
  },
  { name: 'v2.4 Latin-1', tag: id3(4, [['TIT2', latin1('Café')]]) },
  { name: 'v2.4 UTF-16BE without a mark', tag: id3(4, [['TIT2', Buffer.from([2, 0, 0x48, 0, 0x69])]]) },
];

/** Tags the reading leaves to ffprobe. */
const LEFT: Array<{ name: string; tag: Buffer }> = [
  { name: 'a private frame', tag: id3(4, [['PRIV', Buffer.from('owner\0data')]]) },
  { name: 'a genre by number', tag: id3(4, [['TCON', utf8('(13)')]]) },
  { name: 'a v2.3 year, merged into a date', tag: id3(3, [['TYER', latin1('2024')]]) },
  { name: 'an unsynchronised tag', tag: id3(4, [['TIT2', utf8('x')]], 0x80) },
  { name: 'a compressed frame', tag: id3(4, [['TIT2', utf8('x'), 0x08]]) },
  { name: 'a v2.2 tag', tag: Buffer.concat([Buffer.from('ID3\x02\x00\x00', 'latin1'), syncsafe(0)]) },
];

describe('tags read from ID3v2 frames and WAV INFO lists in process', () => {
  let dir: string;
  let mp3: Buffer;
  let wav: Buffer;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-tag-readers-'));
    const make = (name: string, ...args: string[]) =>
      execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=duration=1', ...args, path.join(dir, name)]);
    await make('bare.mp3', '-c:a', 'libmp3lame', '-id3v2_version', '0');
    await make('bare.wav', '-c:a', 'pcm_s16le', '-fflags', '+bitexact');
    [mp3, wav] = await Promise.all([readFile(path.join(dir, 'bare.mp3')), readFile(path.join(dir, 'bare.wav'))]);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** The probe's facts of `bytes` (read in process or not) and ffprobe's own, for the same file. */
  const bothWays = async (name: string, bytes: Buffer) => {
    await writeFile(path.join(dir, name), bytes);
    const stdout = await runFfprobe(
      'ffprobe',
      ['-show_format', '-show_streams', '-show_data_hash', 'md5', '-of', 'json', name],
      { cwd: dir, timeoutMs: 30_000 },
    );
    return {
      probed: await probeFile('ffprobe', name, { cwd: dir, timeoutMs: 30_000 }),
      ffprobe: factsFromProbe(JSON.parse(stdout)),
    };
  };

  it('read ID3v2 text frames as ffmpeg names them', async () => {
    for (const [i, { name, tag }] of READ.entries()) {
      const bytes = Buffer.concat([tag, mp3]);
      assert.ok(mpegAudioFacts(bytes, bytes.length, bytes.subarray(-160)), `${name}: read in process`);
      const { probed, ffprobe } = await bothWays(`read-${i}.mp3`, bytes);
      assert.deepEqual(probed, ffprobe, name);
      assert.ok(Object.keys(probed.tags!).length > 0, name);
    }
    assert.deepEqual(id3Tags(READ[0]!.tag)?.tags, {
      title: 'Título',
      mood: 'calm',
      comment: 'Nice',
      note: 'Later',
      artist: 'First',
      genre: 'Rock',
      TBPM: '120',
    });
  });

  it('leave other ID3 tags, and an MP3 with an ID3v1 tag at its end, to ffprobe', async () => {
    for (const [i, { name, tag }] of LEFT.entries()) {
      const bytes = Buffer.concat([tag, mp3]);
      assert.equal(id3Tags(tag), undefined, name);
      assert.equal(mpegAudioFacts(bytes, bytes.length, bytes.subarray(-160)), undefined, name);
      const { probed, ffprobe } = await bothWays(`left-${i}.mp3`, bytes);
      assert.deepEqual(probed, ffprobe, name);
    }
    const v1 = Buffer.alloc(128);
    v1.write('TAGOld title', 'latin1');
    const withV1 = Buffer.concat([mp3, v1]);
    assert.ok(mpegAudioFacts(mp3, mp3.length, mp3.subarray(-160)), 'the same MP3 without it is read in process');
    assert.equal(mpegAudioFacts(withV1, withV1.length, withV1.subarray(-160)), undefined);
    const { probed, ffprobe } = await bothWays('v1.mp3', withV1);
    assert.equal(probed.tags?.title, 'Old title');
    assert.deepEqual(probed, ffprobe);
  });

  /** A WAV with `chunks` put before its data chunk (the RIFF size is left as ffmpeg does not check it). */
  const withChunks = (...chunks: Buffer[]) => {
    const data = wav.indexOf('data', 12, 'latin1');
    return Buffer.concat([wav.subarray(0, data), ...chunks, wav.subarray(data)]);
  };
  const chunk = (id: string, body: Buffer) => {
    const size = Buffer.alloc(4);
    size.writeUInt32LE(body.length);
    return Buffer.concat([Buffer.from(id, 'latin1'), size, body, Buffer.alloc(body.length % 2)]);
  };
  const info = (...entries: Array<[string, string]>) =>
    chunk(
      'LIST',
      Buffer.concat([Buffer.from('INFO'), ...entries.map(([id, text]) => chunk(id, Buffer.from(`${text}\0`)))]),
    );

  it('read WAV INFO lists as ffmpeg names them, and leave other tags to ffprobe', async () => {
    const tagged = withChunks(info(['INAM', 'Océan'], ['iart', 'odd case'], ['IXYZ', 'kept as it is'], ['ICMT', 'a']));
    assert.ok(waveFacts(tagged, tagged.length));
    const read = await bothWays('info.wav', tagged);
    assert.deepEqual(read.probed, read.ffprobe);
    assert.deepEqual(read.probed.tags, { title: 'Océan', artist: 'odd case', IXYZ: 'kept as it is', comment: 'a' });
    // A broadcast extension chunk (bext) carries tags of its own; a chunk after the data may carry any.
    const bext = withChunks(chunk('bext', Buffer.alloc(602)));
    const trailing = Buffer.concat([wav, info(['INAM', 'at the end'])]);
    for (const [name, bytes] of [
      ['bext.wav', bext],
      ['trailing.wav', trailing],
    ] as const) {
      assert.equal(waveFacts(bytes, bytes.length), undefined, name);
      const left = await bothWays(name, bytes);
      assert.deepEqual(left.probed, left.ffprobe, name);
    }
  });
});
