import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import type { MediaFacts } from '../../../src/engine/contract/media-facts.js';
import { containerOf, isVideoContainer } from '../../../src/sdk/encoding.js';

const MOV = 'mov,mp4,m4a,3gp,3g2,mj2';
const video = (codec: string) => ({ codec, width: 320, height: 240, fps: 25, pixFmt: 'yuv420p' });
const audio = (codec: string) => ({ codec, sampleRate: 48000, channels: 2 });
const facts = (formatName: string, parts: Partial<MediaFacts>): MediaFacts => ({
  formatName,
  isImage: false,
  ...parts,
});

describe('containerOf', () => {
  it("names the input's own container as an output extension", () => {
    const cases: Array<[MediaFacts, string]> = [
      [facts(MOV, { video: video('h264'), audio: audio('aac') }), 'mp4'],
      [facts(MOV, { video: video('prores') }), 'mp4'],
      [facts(MOV, { audio: audio('aac') }), 'm4a'],
      [facts('matroska,webm', { video: video('vp9'), audio: audio('opus') }), 'webm'],
      [facts('matroska,webm', { audio: audio('vorbis') }), 'webm'],
      [facts('matroska,webm', { video: video('h264'), audio: audio('aac') }), 'mkv'],
      [facts('avi', { video: video('mpeg4'), audio: audio('mp3') }), 'avi'],
      [facts('mp3', { audio: audio('mp3') }), 'mp3'],
      [facts('wav', { audio: audio('pcm_s16le') }), 'wav'],
      [facts('flac', { audio: audio('flac') }), 'flac'],
      [facts('aac', { audio: audio('aac') }), 'aac'],
      [facts('ogg', { audio: audio('vorbis') }), 'ogg'],
      [facts('ogg', { audio: audio('opus') }), 'opus'],
      // Containers with no output of their own: written as MP4 (M4A without video).
      [facts('mpegts', { video: video('h264'), audio: audio('aac') }), 'mp4'],
      [facts('ogg', { video: video('theora'), audio: audio('vorbis') }), 'mp4'],
      [facts('flv', { audio: audio('aac') }), 'm4a'],
    ];
    for (const [input, expected] of cases) {
      assert.equal(containerOf(input), expected, `${input.formatName} ${JSON.stringify(input)}`);
    }
  });

  it('tells video containers from audio ones', () => {
    assert.deepEqual(['mp4', 'mov', 'mkv', 'avi', 'webm', 'm4a', 'mp3', 'opus'].map(isVideoContainer), [
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});
