import {
  CONTRACT_VERSION,
  definePlugin,
  MediaflowError,
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
import { checkDocument } from './document-check.js';
import { TIMELINE_VIEW, timelineView } from './dry-run.js';
import { mergeFields } from './merge.js';
import {
  documentProblems,
  mediaKindProblems,
  mediaSources,
  placedClips,
  resolve,
  srcOf,
  type MediaOf,
} from './resolve.js';
import { DEFAULTS, EDIT_SCHEMA, EXAMPLE, RENDER_FORMATS, type EditDocument } from './schema.js';
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
      description: 'The name of a template (an edit document of the server), instead of `edit`',
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
});

type Params = Static<typeof PARAMS>;

/** The document of params that `checkParams` has merged and checked. */
const documentOf = (params: Params): EditDocument => params.edit as EditDocument;

/** The name of the `index`th media of a document among the builder's inputs. */
const inputName = (index: number) => `media_${index + 1}`;

/** Each clip's media among the builder's inputs, by its src (one input per file, however many clips use it). */
function mediaFinder(document: EditDocument, inputs: Record<string, LocalInput[]>): MediaOf {
  const names = new Map(mediaSources(document).sources.map(({ src }, index) => [src, inputName(index)]));
  return (placed) => {
    const src = srcOf(placed.clip);
    return src === undefined ? undefined : inputs[names.get(src)!]?.[0];
  };
}

/** Voice clips need the speech engine, which this server does not run yet: a 501 naming the first. */
function refuseVoices(document: EditDocument): void {
  const voice = placedClips(document).find((placed) => placed.clip.type === 'voice');
  if (voice)
    throw new MediaflowError(
      'MF_ERR_UNAVAILABLE',
      `Voice clips cannot be rendered here yet (${voice.path}): give the speech as an audio clip with role voice`,
    );
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'render',
  path: '/render/',
  summary: 'Render a video from one edit document: tracks of clips, encoded once',
  description:
    'The edit document (`edit`, or a `template` by name) lays tracks of clips on a timeline: `video`, `image`, ' +
    '`text`, `audio`, `voice`, `captions`, `waveform`; a later track is drawn above an earlier one, and the sound of ' +
    'every clip is mixed. Times are seconds or [HH:]MM:SS[.mmm]; `start` and `duration` may be `auto`. Example: ' +
    '`{"tracks": [{"clips": [{"type": "image", "src": "https://example.com/a.jpg", "duration": 5}, {"type": ' +
    '"image", "src": "https://example.com/b.jpg", "duration": 5, "transition": {"type": "fade"}}]}, {"clips": ' +
    '[{"type": "text", "text": "{{TITLE}}", "start": 0, "duration": 3}]}], "merge": {"TITLE": "Hello"}}`. ' +
    "`{{NAME}}` merge fields take the request's `merge` values (in a form, any other field; a file part named " +
    'after one is that file). A bad document is a 400 listing every problem with its path (`errors`), before ' +
    'anything is fetched. `dry_run=true` answers the resolved `timeline` and writes nothing.',
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
    const merged = mergeFields(source, params.merge ?? {});
    const checked = checkDocument(EDIT_SCHEMA, merged.document, merged.whole);
    // A field without a value is told once, not again as the text the schema then finds in its place.
    const told = new Set(merged.problems.map((problem) => problem.path));
    let problems = [...merged.problems, ...checked.problems.filter((problem) => !told.has(problem.path))];
    const document = checked.value as EditDocument;
    if (problems.length === 0) problems = documentProblems(document, settings);
    if (problems.length > 0) throw problemsError(problems);
    if (params.storyboard && !params.dry_run) throw paramError('Expected `dry_run` to be true with `storyboard`');
    refuseVoices(document);
    return { edit: document, merge: merged.used, dry_run: params.dry_run, storyboard: params.storyboard };
  },
  inputs: (params): NamedInput[] =>
    mediaSources(documentOf(params)).sources.map(({ src, kind }, index) => ({
      name: inputName(index),
      source: src,
      kind,
    })),
  build: ({ params, inputs, settings, input, output }) => {
    const document = documentOf(params);
    const media = mediaFinder(document, inputs);
    const unusable = mediaKindProblems(document, media);
    if (unusable.length > 0) throw problemsError(unusable, 'MF_ERR_MEDIA');
    const timeline = resolve(document, params.merge ?? {}, media, settings);
    if (params.dry_run && !params.storyboard) return { commands: [], answers: { timeline: timelineView(timeline) } };
    if (params.storyboard)
      throw new MediaflowError('MF_ERR_UNAVAILABLE', 'Storyboards are not built yet on this server');
    return compile(timeline, input, output);
  },
  message: (params) => (params.dry_run ? 'Timeline resolved successfully' : 'Video rendered successfully'),
});
