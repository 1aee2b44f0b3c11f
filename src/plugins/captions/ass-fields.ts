import { Optional, Param, paramError, type Static, type TObject } from '../../sdk.js';
import { captionStyleFields, captionStyleOf, colourParam } from './caption-style.js';

/**
 * The fields of an operation that can write ASS captions (generate-subtitles, transcribe): the caption style, and
 * word highlighting; refused with the formats that carry no style.
 */

/** The highlight colour when none is given: gold, clear on white text and on most pictures. */
const HIGHLIGHT = '#FFD700';

/** The fields that only an ASS file can carry. */
const ASS_ONLY = [...Object.keys(captionStyleFields), 'highlight', 'highlight_color'];

/** The caption style fields, and word highlighting, for an operation that can write ASS. */
export const assFields = {
  ...captionStyleFields,
  highlight: Optional(
    Param.choice(['word'], { description: 'format ass: word highlights each word of a cue in turn, karaoke-style' }),
  ),
  highlight_color: colourParam('the highlighted word (format ass with highlight=word; default #FFD700)'),
};

/**
 * Style fields would be lost in silence in SRT and WebVTT, which carry none: a 400 when given with another format
 * (the value of `field`, the parameter that chooses the subtitles' format).
 */
export function checkAssOnly(params: Record<string, unknown>, field = 'format'): void {
  const styled = ASS_ONLY.find((key) => params[key] !== undefined);
  if (styled && params[field] !== 'ass')
    throw paramError(
      `Expected \`${field}\` to be ass when \`${styled}\` is given: ${String(params[field])} files carry no styles`,
    );
}

/** The ASS options of `params`: its caption style, and the highlight colour with highlight=word. */
export const assOptionsOf = (params: Static<TObject<typeof assFields>>) => ({
  style: captionStyleOf(params),
  ...(params.highlight ? { highlight: params.highlight_color ?? HIGHLIGHT } : {}),
});
