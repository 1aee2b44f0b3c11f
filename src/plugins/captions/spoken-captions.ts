import type { TimedSentence } from '../../sdk.js';
import { isUnspaced, words } from './cue-lines.js';
import type { TimedWord } from './transcript.js';

/**
 * The words captions show of a speech, timed by where they were spoken. Captions cut a text into words as
 * generate-subtitles does (between spaces, punctuation kept with its word: `Hello,`), a voice into the words it
 * speaks (ICU's words, without punctuation: `Hello`); each caption word takes the times of the spoken words inside
 * it, from the first one's start to the last one's end. A caption word with nothing spoken in it (a lone dash) shows
 * from where the one before it in its sentence ends, or from where its sentence starts.
 */
export function spokenWords(sentences: readonly TimedSentence[]): TimedWord[] {
  return sentences.flatMap((sentence, index) => {
    const shown = words(sentence.text);
    // Sentences of a script written without spaces follow one another without one (`你好。再见。`).
    const previous = sentences[index - 1]?.text.at(-1);
    if (shown[0] && previous !== undefined && isUnspaced(previous) && isUnspaced(shown[0].text[0]!))
      shown[0].spaced = false;
    // Where each caption word begins in the sentence's text without its spaces, which holds the spoken words in order.
    const starts: number[] = [];
    let length = 0;
    for (const word of shown) {
      starts.push(length);
      length += word.text.length;
    }
    const bare = shown.map((word) => word.text).join('');
    const times: Array<{ start: number; end: number } | undefined> = shown.map(() => undefined);
    let cursor = 0;
    for (const spoken of sentence.words) {
      const text = spoken.text.replace(/\s+/g, '');
      const at = bare.indexOf(text, cursor);
      if (at < 0) continue;
      cursor = at + text.length;
      let k = starts.length - 1;
      while (starts[k]! > at) k--;
      const time = times[k];
      times[k] = time ? { start: time.start, end: spoken.end } : { start: spoken.start, end: spoken.end };
    }
    let before = sentence.start;
    return shown.map((word, k) => {
      const time = times[k] ?? { start: before, end: before };
      before = time.end;
      return { ...word, ...time };
    });
  });
}
