import type { PluginDefinition } from '../sdk.js';

/**
 * The built-in operations, each under its command name (its plugin's name, dashed) with the module that holds it, in
 * the order they are listed: the ten operations of the media-service interface, in its order
 * (docs/architecture.md), then the editing toolbox (docs/operations.md#editing-toolbox), then the layers of a short
 * (docs/operations.md#layers-of-a-short), then speech to captions (docs/operations.md#speech-to-captions), then text
 * to speech (docs/voice.md). A module loads when asked: a command line that runs one operation loads its own alone
 * (docs/performance.md, "Start-up").
 */
const MODULES = {
  'merge-audios': () => import('./merge-audios.js'),
  'images-to-video': () => import('./images-to-video.js'),
  'generate-subtitles': () => import('./generate-subtitles.js'),
  'merge-audio-video': () => import('./merge-audio-video.js'),
  'crop-image-to-short': () => import('./crop-image-to-short.js'),
  'add-subtitles': () => import('./add-subtitles.js'),
  'merge-videos': () => import('./merge-videos.js'),
  'convert-image-from-url': () => import('./convert-image-from-url.js'),
  'resize-image': () => import('./resize-image.js'),
  'convert-video': () => import('./convert-video.js'),
  // The editing toolbox, beyond the interface.
  'trim-media': () => import('./trim-media/index.js'),
  'cut-media': () => import('./cut-media.js'),
  'split-media': () => import('./split-media.js'),
  'extract-frames': () => import('./extract-frames.js'),
  'media-metadata': () => import('./media-metadata.js'),
  'extract-audio': () => import('./extract-audio.js'),
  'change-speed': () => import('./change-speed.js'),
  'normalize-audio': () => import('./normalize-audio/index.js'),
  'remove-silence': () => import('./remove-silence/index.js'),
  // mediaflow's own addition to the toolbox: a video in a short's frame (the auto-captions-short pipeline).
  'crop-video': () => import('./crop-video.js'),
  // The layers of a short (docs/operations.md#layers-of-a-short).
  'mix-audio': () => import('./mix-audio/index.js'),
  'overlay-image': () => import('./overlay-image.js'),
  'add-text': () => import('./add-text.js'),
  // Speech to captions (docs/operations.md#speech-to-captions).
  transcribe: () => import('./transcribe.js'),
  // Text to speech (docs/voice.md).
  speak: () => import('./speak.js'),
  // One edit document, one encode (docs/render.md).
  render: () => import('./render/index.js'),
} as const;

/** The command name of a built-in operation. */
export type BuiltinName = keyof typeof MODULES;

/** The command names of the built-in operations, in their order. */
export const BUILTIN_NAMES = Object.keys(MODULES) as BuiltinName[];

/** Whether `name` is the command name of a built-in operation. */
export const isBuiltinName = (name: string): name is BuiltinName => Object.hasOwn(MODULES, name);

/** The built-in plugins `names` names (every one by default), in that order. */
export async function loadBuiltins(names: readonly BuiltinName[] = BUILTIN_NAMES): Promise<PluginDefinition[]> {
  return Promise.all(names.map(async (name) => (await MODULES[name]()).default as unknown as PluginDefinition));
}
