import {
  CONTRACT_VERSION,
  definePlugin,
  fanoutParam,
  Optional,
  Param,
  paramError,
  problemsError,
  Type,
  type LocalInput,
  type NamedInput,
  type Static,
} from '../../sdk.js';
import { compile } from './compile.js';
import { TIMELINE_VIEW, timelineView } from './dry-run.js';
import { checkEdit } from './edit-check.js';
import {
  documentProblems,
  mediaKindProblems,
  mediaSources,
  resolve,
  speechKey,
  srcOf,
  voiceSources,
  type MediaOf,
} from './resolve.js';
import { DEFAULTS, EDIT_SCHEMA, EXAMPLE, RENDER_FORMATS, type EditDocument } from './schema.js';
import { SCENE_MEDIA, SCENE_SECONDS } from './scenes.js';
import { storyboard } from './storyboard.js';
import { loadTemplate, TEMPLATE_NAME } from './templates.js';

/**
 * `/render/`: one edit document (tracks of clips: video, image, text, audio, voice, captions, waveform) rendered in
 * one encode (docs/render.md). The document is merged and checked whole before anything is fetched (`checkParams`,
 * which hands the later hooks the merged document), its media are the plugin's named inputs, and the resolver makes
 * the timeline the compiler reads (resolve.ts, timeline.ts).
 */

const PARAMS = Type.Object({
  edit: Optional(
    Param.document(EDIT_SCHEMA, {
      description:
        'The edit document (docs/render.md): `output`, `merge` defaults and `tracks` of clips; give `edit` or ' +
        '`template`',
      examples: [EXAMPLE],
    }),
  ),
  template: Optional(
    Param.text({
      maxLength: 64,
      pattern: TEMPLATE_NAME,
      description:
        'The name of a template: an edit document of the server (GET /templates/ and `mediaflow templates` list them ' +
        'with their merge fields), instead of `edit`',
    }),
  ),
  merge: Optional(
    Param.values({
      description: 'The merge values: `{{NAME}}` in the document is the value of NAME here, else its `merge` default',
    }),
  ),
  dry_run: Param.boolean({
    default: false,
    description: 'Answer the resolved timeline (every time worked out, every media probed) without encoding anything',
  }),
  storyboard: Param.boolean({
    default: false,
    description: "With dry_run: also draw each visual clip's frame at its midpoint, on its track, in one picture",
  }),
  fanout: fanoutParam(),
});

type Params = Static<typeof PARAMS>;

/** The document of params that `checkParams` has merged and checked. */
const documentOf = (params: Params): EditDocument => params.edit as EditDocument;

/** The name of the `index`th media of a document among the builder's inputs. */
const inputName = (index: number) => `media_${index + 1}`;
/** The name of the `index`th speech of a document's voice clips among the builder's inputs. */
const speechName = (index: number) => `speech_${index + 1}`;

/**
 * Each clip's media among the builder's inputs: by its src (one input per file, however many clips use it), a voice
 * clip's by what it says (one speech per text, voice and speed).
 */
function mediaFinder(document: EditDocument, inputs: Record<string, LocalInput[]>): MediaOf {
  const names = new Map(mediaSources(document).sources.map(({ src }, index) => [src, inputName(index)]));
  const speeches = new Map(voiceSources(document).map(({ key }, index) => [key, speechName(index)]));
  return ({ clip }) => {
    if (clip.type === 'voice') return inputs[speeches.get(speechKey(clip))!]?.[0];
    const src = srcOf(clip);
    return src === undefined ? undefined : inputs[names.get(src)!]?.[0];
  };
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'render',
  path: '/render/',
  summary: 'Render a video from one edit document: tracks of clips, encoded once',
  // An agent reads this as the MCP tool's description: the document taught by one complete example.
  description:
    'One JSON edit document (`edit`) rendered in one encode: `tracks` of clips on a timeline; a later track is drawn ' +
    'above an earlier one, and the sound of every clip is mixed. Clips: `image` and `video` (`src`, `fit`, `motion` ' +
    'for images, `transition` from the clip before on the track), `text` (with caption style fields: `font_size`, ' +
    '`color`, `position`), `audio` (`volume` in dB, `loop`, `fade_in`, `fade_out`, `role: voice`, `duck`), ' +
    '`voice` (`text` the server speaks, `voice` as <engine>:<name> from GET /voices/, `speed`; it lasts its speech, ' +
    'and music with `duck` dips under it), `captions` (`src`, an SRT or VTT, or `from`, the id of a clip whose ' +
    "speech is captioned: a voice clip's by its own word times, `words_per_line` words a line; an audio or video " +
    "clip's transcribed) and `waveform` (`from`). Times are seconds or [HH:]MM:SS[.mmm]; `start` is `auto` by " +
    "default (the end of the clip before on its track), `duration` the media's own length (images and text need " +
    'one); a transition overlaps the two clips ' +
    'by its duration. Example, 9.5 s: two pictures crossing with a fade, a title over the first 3 s, looped music ' +
    `under them:\n${JSON.stringify(EXAMPLE)}\n` +
    "`{{NAME}}` in any string is a merge field: the request's `merge` value, else the document's `merge` default " +
    '(in a form, any other field is a merge value, and a file part named after one is that file). Instead of ' +
    '`edit`, `template` names a template of the server (shipped: narrated-short, quote-card, audiogram; GET ' +
    '/templates/ lists them with their merge fields). A bad document is a 400 listing every problem with its JSON ' +
    'path (`errors`), before anything is fetched; `dry_run=true` answers the resolved `timeline` and writes nothing ' +
    "(with `storyboard=true`, one picture of it: each visual clip's middle frame on its track, `storyboard_url`).",
  params: PARAMS,
  answers: Type.Object({
    duration: Optional(Type.Number({ description: 'Seconds the rendered video lasts', examples: [9.5] })),
    timeline: Optional(TIMELINE_VIEW),
  }),
  output: (params) => {
    if (params.dry_run)
      return params.storyboard ? { field: 'storyboard_url', path: '{id}/storyboard.png' } : { files: [] };
    const format = params.edit?.output;
    const given = typeof format === 'object' && format !== null ? (format as { format?: unknown }).format : undefined;
    const container = RENDER_FORMATS.find((name) => name === given) ?? DEFAULTS.format;
    return { field: 'output_file', path: `{id}/render.${container}` };
  },
  // Everything the document alone shows is checked here, before anything is queued or fetched; the later hooks get
  // the merged, checked document and the value each merge field took.
  checkParams: (params, settings) => {
    if ((params.edit === undefined) === (params.template === undefined))
      throw paramError(
        params.edit === undefined
          ? 'Missing the edit: give `edit` (an edit document) or `template` (the name of a template)'
          : 'Give `edit` or `template`, not both',
      );
    const source = params.edit ?? loadTemplate(settings.templatesDir, params.template!);
    const checked = checkEdit(EDIT_SCHEMA, source, params.merge ?? {});
    const document = checked.document as EditDocument;
    const problems = checked.problems.length > 0 ? checked.problems : documentProblems(document, settings);
    if (problems.length > 0) throw problemsError(problems);
    if (params.storyboard && !params.dry_run) throw paramError('Expected `dry_run` to be true with `storyboard`');
    const { dry_run, storyboard, fanout } = params;
    return { edit: document, merge: checked.used, dry_run, storyboard, fanout };
  },
  // The media are fetched; the voice clips' speech is made by the engine's voices (docs/voice.md).
  inputs: (params): NamedInput[] => [
    ...mediaSources(documentOf(params)).sources.map(({ src, kind }, index) => ({
      name: inputName(index),
      source: src,
      kind,
    })),
    ...voiceSources(documentOf(params)).map(({ speak }, index) => ({
      name: speechName(index),
      source: `the speech of ${speak.at}`,
      kind: 'audio' as const,
      speak,
    })),
  ],
  build: ({ params, inputs, settings, input, output }) => {
    const document = documentOf(params);
    const media = mediaFinder(document, inputs);
    const unusable = mediaKindProblems(document, media);
    if (unusable.length > 0) throw problemsError(unusable, 'MF_ERR_MEDIA');
    const timeline = resolve(document, params.merge ?? {}, media, settings);
    if (params.dry_run) {
      const answers = { timeline: timelineView(timeline) };
      return params.storyboard ? { ...storyboard(timeline, input, output), answers } : { commands: [], answers };
    }
    const scenes = { seconds: settings?.partSeconds ?? SCENE_SECONDS, media: SCENE_MEDIA };
    return compile(timeline, input, output, { scenes, fanout: params.fanout });
  },
  message: (params) => (params.dry_run ? 'Timeline resolved successfully' : 'Video rendered successfully'),
});
