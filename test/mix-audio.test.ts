import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture, lavfi } from './helpers/fixtures.js';
import { startFileServer, serveFile } from './helpers/file-server.js';
import {
  audioOf,
  claimMp3Seconds,
  durationOf,
  loudnessOf,
  probe,
  toneDbAt,
  videoOf,
  videoPacketHashes,
} from './helpers/media.js';
import { makeMedia, outOfRange, UUID, useOperation } from './helpers/operation.js';

const MESSAGE = 'Audio mixed successfully';
/** The voice's tone and the music's, apart enough for each to be measured in the mix on its own. */
const VOICE_HZ = 300;
const MUSIC_HZ = 1000;

/**
 * The "voice": 6 s of a 300 Hz tone spoken in the first second of every two (0-1, 2-3, 4-5), silent
 * between. Speech spans measured are well inside these seconds, pauses well after the compressor's release.
 */
const SPEECH = [0.25, 2.25];
const PAUSES = [1.65, 3.65];
const SPAN = 0.3;

/** The voice's tone at `amplitude` (an expression of t), in the first second of every two. */
const spoken = (amplitude: string, seconds: number) =>
  `aevalsrc=exprs='${amplitude}*sin(2*PI*${VOICE_HZ}*t)*lt(mod(t\\,2)\\,1)':s=48000:d=${seconds}`;
const VOICE = spoken('0.25', 6);
const PCM = ['-c:a', 'pcm_s16le'];

describe('mix-audio', () => {
  const op = useOperation({
    fixtures: ['clip-2s-640x360-25fps.mp4', 'clip-1s-320x240-30fps-silent.mp4'],
    make: {
      'voice.wav': [...lavfi(VOICE), ...PCM],
      // The music, a third of the voice's length.
      'music.wav': [...lavfi(`sine=f=${MUSIC_HZ}:r=48000:d=2`), ...PCM],
      'silence.wav': [...lavfi('anullsrc=r=48000:cl=mono:d=3'), ...PCM],
      // Longer than a minute, so measured on windows: a voice and a music whose levels swell and fade slowly,
      // over periods that the windows do not divide, the music shorter than the voice, so looped.
      'long-voice.wav': [...lavfi(spoken('0.25*(0.6+0.4*sin(2*PI*t/37))', 90)), ...PCM],
      'long-music.wav': [
        ...lavfi(`aevalsrc=exprs='0.125*(0.7+0.3*sin(2*PI*t/23))*sin(2*PI*${MUSIC_HZ}*t)':s=48000:d=70`),
        ...PCM,
      ],
      // At 192 kHz stereo, 90 s of music are 140 MB of samples: more than a loop keeps in memory (128 MiB).
      'hires-voice.flac': [...lavfi(`sine=f=${VOICE_HZ}:r=192000:d=100`), '-ac', '2', '-c:a', 'flac'],
      'hires-music.flac': [...lavfi(`sine=f=${MUSIC_HZ}:r=48000:d=90`), '-c:a', 'flac'],
      // The voice under a picture, as H.264 and AAC in MP4.
      'talk.mp4': [
        ...lavfi('testsrc2=size=320x240:rate=25:duration=6', VOICE),
        ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-shortest'],
      ],
    },
  });
  const { made } = op;

  /**
   * The music's tone level expected in the mix at `volume`: its own level alone, moved by the gain that brings
   * its integrated loudness (EBU R128) to the voice's plus `volume`.
   */
  const musicAt = async (volume: number): Promise<number> => {
    const [voice, music] = await Promise.all([loudnessOf(made['voice.wav']!), loudnessOf(made['music.wav']!)]);
    const alone = await toneDbAt(made['music.wav']!, MUSIC_HZ, 0.5, SPAN);
    return alone + voice.integrated + volume - music.integrated;
  };

  const mix = async (fields: Record<string, string>, ext = 'wav'): Promise<string> => {
    const all = { media_url: op.local('voice.wav'), music_url: op.local('music.wav'), ...fields };
    return (await op.expectOutput('/mix-audio/', all, { message: MESSAGE, name: `${UUID}/mixed\\.${ext}` })).file;
  };

  it('keeps the voice at its level, the music music_volume under it, for as long as the voice', async () => {
    const file = await mix({ ducking: 'false', fade_out: '0' });
    const voice = made['voice.wav']!;
    for (const start of SPEECH) {
      const [inMix, alone] = await Promise.all([
        toneDbAt(file, VOICE_HZ, start, SPAN),
        toneDbAt(voice, VOICE_HZ, start, SPAN),
      ]);
      assert.ok(Math.abs(inMix - alone) <= 1, `voice at ${start} s: ${inMix} dB in the mix, ${alone} dB alone`);
      const music = await toneDbAt(file, MUSIC_HZ, start, SPAN);
      assert.ok(Math.abs(music - (await musicAt(-18))) <= 0.5, `music at ${music} dB`);
    }
    assert.ok(Math.abs(durationOf(await probe(file)) - 6) <= 0.01, 'as long as the voice');
    const quieter = await mix({ ducking: 'false', fade_out: '0', music_volume: '-30' });
    const [loud, quiet] = await Promise.all([
      toneDbAt(file, MUSIC_HZ, 2.25, SPAN),
      toneDbAt(quieter, MUSIC_HZ, 2.25, SPAN),
    ]);
    assert.ok(Math.abs(loud - quiet - 12) <= 0.5, `${loud} dB at -18, ${quiet} dB at -30`);
  });

  it('dips the music under speech with ducking, by 6 dB or more, and not without it', async () => {
    const ducked = await mix({ fade_out: '0' });
    const plain = await mix({ ducking: 'false', fade_out: '0' });
    const sections: Array<[number, number]> = [
      [SPEECH[0]!, PAUSES[0]!],
      [SPEECH[1]!, PAUSES[1]!],
    ];
    for (const [speech, pause] of sections) {
      const dip = (await toneDbAt(ducked, MUSIC_HZ, pause, SPAN)) - (await toneDbAt(ducked, MUSIC_HZ, speech, SPAN));
      assert.ok(dip >= 6, `ducked: the music only ${dip} dB lower in speech at ${speech} s`);
      const flat = (await toneDbAt(plain, MUSIC_HZ, pause, SPAN)) - (await toneDbAt(plain, MUSIC_HZ, speech, SPAN));
      assert.ok(Math.abs(flat) < 1, `not ducked: the music ${flat} dB lower in speech`);
      // The voice itself is never touched by the ducking.
      const voice = await toneDbAt(made['voice.wav']!, VOICE_HZ, speech, SPAN);
      assert.ok(Math.abs((await toneDbAt(ducked, VOICE_HZ, speech, SPAN)) - voice) <= 1, 'the voice kept its level');
    }
  });

  it('loops a music a third of the voice to cover it, and stops it at its end without loop', async () => {
    const looped = await mix({ ducking: 'false', fade_out: '0' });
    const once = await mix({ ducking: 'false', fade_out: '0', loop: 'false' });
    const start = await toneDbAt(looped, MUSIC_HZ, 0.5, SPAN);
    for (const at of [2.5, 4.5, 5.5]) {
      const level = await toneDbAt(looped, MUSIC_HZ, at, SPAN);
      assert.ok(Math.abs(level - start) <= 1, `looped music at ${at} s: ${level} dB, ${start} at the start`);
      assert.ok((await toneDbAt(once, MUSIC_HZ, at, SPAN)) < start - 40, `no music at ${at} s without loop`);
    }
    assert.ok(Math.abs(durationOf(await probe(once)) - 6) <= 0.01, 'as long as the voice without loop too');
  });

  it('measures a voice and a music over a minute long on windows of them, the gain still within 1 dB', async () => {
    const file = await mix({
      media_url: op.local('long-voice.wav'),
      music_url: op.local('long-music.wav'),
      ducking: 'false',
      fade_out: '0',
    });
    // The gain that the whole of each, measured, would give.
    const [voice, music] = await Promise.all([
      loudnessOf(made['long-voice.wav']!),
      loudnessOf(made['long-music.wav']!),
    ]);
    const gain = voice.integrated - 18 - music.integrated;
    const alone = await toneDbAt(made['long-music.wav']!, MUSIC_HZ, 10, 1);
    const inMix = await toneDbAt(file, MUSIC_HZ, 10, 1);
    assert.ok(Math.abs(inMix - alone - gain) <= 1, `music moved ${inMix - alone} dB, ${gain} dB measured whole`);
    // 70 s on, the music has looped back to where it was at 10 s.
    const looped = await toneDbAt(file, MUSIC_HZ, 80, 1);
    assert.ok(Math.abs(looped - inMix) <= 0.5, `looped music at 80 s: ${looped} dB, ${inMix} dB at 10 s`);
    assert.ok(Math.abs(durationOf(await probe(file)) - 90) <= 0.01, 'as long as the voice');
  });

  it('measures a lying MP3 music no further than the cap, not to its real end (issue 33)', async () => {
    // Its header claims 0.43 s; its frames run 3 minutes: 20 s quiet, then 28 dB louder to the end.
    const tone = `aevalsrc=exprs='if(lt(t\\,20)\\,0.02\\,0.5)*sin(2*PI*${MUSIC_HZ}*t)':s=44100:d=180`;
    const lying = await makeMedia(path.join(op.scratch, 'lying-music.mp3'), [
      ...lavfi(tone),
      ...['-c:a', 'libmp3lame', '-b:a', '32k'],
    ]);
    const quiet = await makeMedia(path.join(op.scratch, 'lying-music-head.wav'), ['-t', '10', '-i', lying]);
    await claimMp3Seconds(lying, 0.43);
    assert.ok(durationOf(await probe(lying)) < 0.5, 'ffprobe believes the claim');
    const served = await startFileServer({ '/lying.mp3': serveFile(lying, 'audio/mpeg') });
    try {
      const file = await mix({ music_url: served.url('/lying.mp3'), ducking: 'false', fade_out: '0' });
      // Measured within the cap (the voice's 6 s and the margin), the music is the quiet part it claims to be:
      // measured to its end, it would be taken for 28 dB louder and set that much lower.
      const [voice, head] = await Promise.all([loudnessOf(made['voice.wav']!), loudnessOf(quiet)]);
      const gain = voice.integrated - 18 - head.integrated;
      const moved = (await toneDbAt(file, MUSIC_HZ, 2.25, SPAN)) - (await toneDbAt(quiet, MUSIC_HZ, 2.25, SPAN));
      assert.ok(Math.abs(moved - gain) <= 1, `music moved ${moved} dB, ${gain} dB as measured within the cap`);
    } finally {
      await served.close();
    }
  });

  it('loops a music too long to keep in memory by reading it again from its start', async () => {
    const file = await mix(
      {
        media_url: op.local('hires-voice.flac'),
        music_url: op.local('hires-music.flac'),
        ducking: 'false',
        fade_out: '0',
      },
      'flac',
    );
    const start = await toneDbAt(file, MUSIC_HZ, 2, SPAN);
    const looped = await toneDbAt(file, MUSIC_HZ, 92, SPAN);
    assert.ok(Math.abs(looped - start) <= 0.5, `looped music at 92 s: ${looped} dB, ${start} dB at 2 s`);
    assert.ok(Math.abs(durationOf(await probe(file)) - 100) <= 0.01, 'as long as the voice');
  });

  it('fades the music in and out', async () => {
    const file = await mix({ ducking: 'false', fade_in: '1', fade_out: '2' });
    const full = await toneDbAt(file, MUSIC_HZ, 2.5, SPAN);
    // A linear fade: about half its gain halfway (-6 dB), far down near its ends.
    assert.ok((await toneDbAt(file, MUSIC_HZ, 0, 0.1)) < full - 12, 'quiet at the start of the fade-in');
    const halfIn = await toneDbAt(file, MUSIC_HZ, 0.45, 0.1);
    assert.ok(Math.abs(halfIn - (full - 6)) <= 1.5, `fade-in halfway ${halfIn} dB, full ${full} dB`);
    const halfOut = await toneDbAt(file, MUSIC_HZ, 4.95, 0.1);
    assert.ok(Math.abs(halfOut - (full - 6)) <= 1.5, `fade-out halfway ${halfOut} dB, full ${full} dB`);
    assert.ok((await toneDbAt(file, MUSIC_HZ, 5.85, 0.1)) < full - 15, 'quiet at the end of the fade-out');
  });

  it("mixes under a video's sound, copying its picture packet for packet", async () => {
    const file = await mix({ media_url: op.local('talk.mp4') }, 'mp4');
    const source = made['talk.mp4']!;
    assert.deepEqual(await videoPacketHashes(file), await videoPacketHashes(source));
    const info = await probe(file);
    assert.equal(videoOf(info)!.codec_name, 'h264');
    assert.equal(audioOf(info)!.codec_name, 'aac');
    assert.ok(Math.abs(Number(audioOf(info)!.duration) - 6) <= 0.05, `sound of ${audioOf(info)!.duration} s`);
    assert.ok((await toneDbAt(file, MUSIC_HZ, PAUSES[0]!, SPAN)) > -50, 'the music is in the sound');
  });

  it('refuses bad input with its error, leaving nothing behind', async () => {
    const voice = op.local('voice.wav');
    const music = op.local('music.wav');
    const mute = op.files.url('/f/clip-1s-320x240-30fps-silent.mp4');
    // Silent throughout: no loudness to set the music by, nor music to set.
    const silence = op.local('silence.wav');
    await op.expectRefusals('/mix-audio/', [
      ...outOfRange({ media_url: voice, music_url: music }, [
        ['music_volume', '1', '-60 to 0'],
        ['fade_out', '61', '0 to 60'],
        ['fade_in', '-1', '0 to 60'],
      ]),
      [{ media_url: voice, music_url: music, ducking: 'maybe' }, 400, /`ducking`/],
      [
        { media_url: voice, music_url: music, fade_in: '3', fade_out: '4' },
        400,
        '`fade_in` and `fade_out` together are 7 s, longer than the voice, which lasts 6 s',
      ],
      [{ media_url: voice, music_url: mute }, 422, `Input ${mute} has no audio stream: there is no music to mix`],
      [
        { media_url: mute, music_url: music },
        422,
        `Input ${mute} has no audio stream: there is no voice to mix the music under`,
      ],
      [
        { media_url: silence, music_url: music, fade_out: '0' },
        422,
        `Input ${silence} is silent: there is no voice to mix`,
      ],
      [{ media_url: voice, music_url: silence }, 422, `Input ${silence} is silent: there is no music to mix`],
    ]);
  });

  it('runs asynchronously as a job', async () => {
    const fields = { media_url: op.local('voice.wav'), music_url: op.local('music.wav') };
    const { file } = await op.asJob('/mix-audio/', fields, MESSAGE);
    assert.ok(Math.abs(durationOf(await probe(file)) - 6) <= 0.01);
    assert.ok((await toneDbAt(file, MUSIC_HZ, PAUSES[0]!, SPAN)) > -50, 'the music is in the mix');
  });

  it('runs from the CLI on local files', async () => {
    const files = ['--media-url', made['voice.wav']!, '--music-url', made['music.wav']!];
    await assertCliParity({
      args: ['mix-audio', ...files, '--music-volume', '-12', '--ducking', 'false'],
      message: MESSAGE,
      output: /\/mixed\.wav$/,
      check: async (file) => {
        const music = await toneDbAt(file, MUSIC_HZ, 2.25, SPAN);
        assert.ok(Math.abs(music - (await musicAt(-12))) <= 0.5, `music at ${music} dB`);
      },
      refused: {
        args: ['mix-audio', ...files, '--music-volume', '1'],
        stderr: /Expected `(--)?music[-_]volume` to be a number from -60 to 0, got `1`/,
      },
    });
  });

  it('runs in a pipeline, under the sound of the step before', async () => {
    const { out, written } = await op.runPipeline(
      `
        name: scored
        description: A clip trimmed, then music mixed under its sound
        inputs:
          clip: url
          music: url
        steps:
          cut:
            op: trim-media
            with: { media_url: "{{ inputs.clip }}", start: 0.5 }
          scored:
            op: mix-audio
            with: { media_url: "{{ steps.cut.output }}", music_url: "{{ inputs.music }}", fade_out: 1 }
        results:
          scored: "{{ steps.scored.output }}"
      `,
      { clip: await fixture('clip-2s-640x360-25fps.mp4'), music: made['music.wav']! },
    );
    assert.deepEqual(written, ['scored.mp4']);
    const file = path.join(out, 'scored.mp4');
    assert.ok(Math.abs(Number(audioOf(await probe(file))!.duration) - 1.5) <= 0.1);
    assert.ok((await toneDbAt(file, MUSIC_HZ, 0.3, SPAN)) > -60, 'the music is in the sound');
  });
});
