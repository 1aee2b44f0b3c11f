import assert from 'node:assert/strict';
import { describe, it } from '../helpers/lifecycle.js';
import { cues, srtTime, toSrt } from '../../src/plugins/captions/cue-lines.js';

describe('generate-subtitles: cues, srtTime, toSrt', () => {
  it('cuts cues at words_per_line words, keeping the words and their order', () => {
    const words = Array.from({ length: 19 }, (_, i) => `w${i + 1}`);
    assert.deepEqual(cues(words.join(' '), 8), [
      'w1 w2 w3 w4 w5 w6 w7 w8',
      'w9 w10 w11 w12 w13 w14 w15 w16',
      'w17 w18 w19',
    ]);
    assert.deepEqual(cues(words.join(' '), 1), words);
    assert.deepEqual(cues('  one\ttwo\n\nthree \r\n four  ', 3), ['one two three', 'four']);
  });

  it('ends a cue early at sentence punctuation, closing quotes and brackets included', () => {
    assert.deepEqual(cues('Hi. How are you today? Fine! Wait… what "Stop." (she left.) and then more words here', 8), [
      'Hi.',
      'How are you today?',
      'Fine!',
      'Wait…',
      'what "Stop."',
      '(she left.)',
      'and then more words here',
    ]);
    // Punctuation inside a word (numbers, abbreviations with no space after) does not end a cue.
    assert.deepEqual(cues('Pi is 3.14 roughly, e.g.this stays', 8), ['Pi is 3.14 roughly, e.g.this stays']);
  });

  it(
    'splits text written without spaces (CJK) after its full stops, keeping closing brackets with their ' + 'sentence',
    () => {
      assert.deepEqual(cues('你好。世界！再见？', 8), ['你好。', '世界！', '再见？']);
      assert.deepEqual(cues('「你好。」世界', 8), ['「你好。」', '世界']);
      assert.deepEqual(cues('今日は。 Hello there. ¿Qué tal? 🎉 done', 8), [
        '今日は。',
        'Hello there.',
        '¿Qué tal?',
        '🎉 done',
      ]);
    },
  );

  it('counts the words of Chinese, Japanese and Thai, written without spaces, and joins them without spaces', () => {
    // Each cue holds at most 3 words as Intl.Segmenter (ICU's dictionaries) cuts them; punctuation
    // stays with the word before it.
    assert.deepEqual(cues('我们今天去公园玩，然后回家吃饭。', 3), ['我们今天去', '公园玩，然后', '回家吃饭。']);
    assert.deepEqual(cues('吾輩は猫である。名前はまだ無い。', 3), ['吾輩は猫', 'である。', '名前はまだ', '無い。']);
    const thai = cues('ภาษาไทยเป็นภาษาที่เขียนโดยไม่มีช่องว่าง', 4);
    assert.deepEqual(thai, ['ภาษาไทยเป็นภาษา', 'ที่เขียนโดยไม่มี', 'ช่องว่าง']);
    // Mixed with spaced text, each keeps its own spacing.
    assert.deepEqual(cues('Hello 你好世界 world', 8), ['Hello 你好世界 world']);
    assert.deepEqual(cues('Hello 你好世界 world', 2), ['Hello 你好', '世界 world']);
  });

  it('formats times as HH:MM:SS,mmm, past an hour and past a day', () => {
    assert.equal(srtTime(0), '00:00:00,000');
    assert.equal(srtTime(3), '00:00:03,000');
    assert.equal(srtTime(59.999), '00:00:59,999');
    assert.equal(srtTime(61.5), '00:01:01,500');
    assert.equal(srtTime(3599), '00:59:59,000');
    assert.equal(srtTime(3600), '01:00:00,000');
    assert.equal(srtTime(3 * 3600 + 25 * 60 + 45.25), '03:25:45,250');
    assert.equal(srtTime(25 * 3600), '25:00:00,000');
  });

  it('writes numbered cues from 1, one after the other, with a blank line between them', () => {
    assert.equal(
      toSrt(['first line', 'second', 'third'], 4),
      '1\n00:00:00,000 --> 00:00:04,000\nfirst line\n\n2\n00:00:04,000 --> 00:00:08,000\nsecond\n\n3\n' +
        '00:00:08,000 --> 00:00:12,000\nthird\n',
    );
    assert.equal(toSrt(['only'], 3600), '1\n00:00:00,000 --> 01:00:00,000\nonly\n');
  });
});
