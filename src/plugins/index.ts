import type { PluginDefinition } from '../sdk.js';
import { loadPlugins, type PluginLoadOptions } from '../engine/plugins/plugin-loader.js';
import { Registry } from '../engine/plugins/registry.js';
import addSubtitles from './add-subtitles.js';
import addText from './add-text.js';
import changeSpeed from './change-speed.js';
import convertImageFromUrl from './convert-image-from-url.js';
import convertVideo from './convert-video.js';
import cropImageToShort from './crop-image-to-short.js';
import cropVideo from './crop-video.js';
import cutMedia from './cut-media.js';
import extractAudio from './extract-audio.js';
import extractFrames from './extract-frames.js';
import generateSubtitles from './generate-subtitles.js';
import imagesToVideo from './images-to-video.js';
import mediaMetadata from './media-metadata.js';
import mergeAudioVideo from './merge-audio-video.js';
import mergeAudios from './merge-audios.js';
import mergeVideos from './merge-videos.js';
import mixAudio from './mix-audio/index.js';
import normalizeAudio from './normalize-audio/index.js';
import overlayImage from './overlay-image.js';
import removeSilence from './remove-silence/index.js';
import render from './render/index.js';
import resizeImage from './resize-image.js';
import speak from './speak.js';
import splitMedia from './split-media.js';
import transcribe from './transcribe.js';
import trimMedia from './trim-media/index.js';

/**
 * The ten operations of the media-service interface, in its order (docs/architecture.md), then the editing
 * toolbox (docs/operations.md#editing-toolbox), then the layers of a short (docs/operations.md#layers-of-a-short),
 * then speech to captions (docs/operations.md#speech-to-captions), then text to speech (docs/voice.md).
 */
export const builtinPlugins = [
  mergeAudios,
  imagesToVideo,
  generateSubtitles,
  mergeAudioVideo,
  cropImageToShort,
  addSubtitles,
  mergeVideos,
  convertImageFromUrl,
  resizeImage,
  convertVideo,
  // The editing toolbox, beyond the interface.
  trimMedia,
  cutMedia,
  splitMedia,
  extractFrames,
  mediaMetadata,
  extractAudio,
  changeSpeed,
  normalizeAudio,
  removeSilence,
  // mediaflow's own addition to the toolbox: a video in a short's frame (the auto-captions-short pipeline).
  cropVideo,
  // The layers of a short (docs/operations.md#layers-of-a-short).
  mixAudio,
  overlayImage,
  addText,
  // Speech to captions (docs/operations.md#speech-to-captions).
  transcribe,
  // Text to speech (docs/voice.md).
  speak,
  // One edit document, one encode (docs/render.md).
  render,
] as unknown as PluginDefinition[];

/** A registry holding the built-ins; third-party plugins are registered after them. */
export function builtinRegistry(): Registry {
  const registry = new Registry();
  for (const plugin of builtinPlugins) registry.register(plugin, 'built-in');
  return registry;
}

/**
 * The built-ins, then the third-party plugins that `mediaflow.config.*`, `MEDIAFLOW_PLUGINS` and
 * `--plugin` name (see src/engine/plugins/plugin-loader.ts). Throws when one cannot be loaded or is invalid.
 */
export async function loadRegistry(options: PluginLoadOptions = {}): Promise<Registry> {
  const registry = builtinRegistry();
  await loadPlugins(registry, options);
  return registry;
}
