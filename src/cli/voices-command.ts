import { Command, Option } from 'commander';
import { loadConfig } from '../engine/config.js';
import { paramError } from '../engine/errors.js';
import { resolveBinaries } from '../engine/exec/binaries.js';
import type { Voices } from '../engine/voice/voices.js';
import type { Voice } from '../engine/contract/speech.js';
import { fail } from './fail.js';
import { columns, usageErrorsExitTwo } from './subcommands.js';

/** The flags every `voices` subcommand takes: where models are kept and which are configured. */
interface VoiceFlags {
  dataDir?: string;
  ttsModels?: string;
  allowPrivateUrls?: boolean;
}

/** The voices of this machine, from the environment and the flags (loaded when a subcommand runs, not before). */
async function voicesOf(flags: VoiceFlags): Promise<Voices> {
  const settings = loadConfig(process.env, {
    ...(flags.dataDir !== undefined && { dataDir: flags.dataDir }),
    ...(flags.ttsModels !== undefined && { ttsModels: flags.ttsModels }),
    ...(flags.allowPrivateUrls && { allowPrivateUrls: true }),
  });
  let ffmpeg = 'ffmpeg';
  try {
    ffmpeg = resolveBinaries().ffmpeg;
  } catch {
    // No ffmpeg: flite is then listed as unavailable, and the others are still listed.
  }
  const { Voices } = await import('../engine/voice/voices.js');
  return new Voices({ settings, ffmpeg });
}

const withSettings = (command: Command) =>
  command
    .addOption(
      new Option('--data-dir <dir>', 'where fetched models are kept, in <dir>/voices [env MEDIAFLOW_DATA_DIR]'),
    )
    .addOption(
      new Option(
        '--tts-models <list>',
        'the neural voices, <engine>:<name>=<path or URL>, comma-separated [env MEDIAFLOW_TTS_MODELS]',
      ),
    );

/** Voices as rows of `mediaflow voices`' table. */
const table = (voices: Voice[]): string =>
  columns(
    ['ID', 'ENGINE', 'LANGUAGE'],
    voices.map((voice) => [voice.id, voice.engine, voice.language]),
  );

function listCommand(): Command {
  return withSettings(
    new Command('list').summary('List the voices installed here, and why an engine cannot speak (the default)'),
  )
    .addOption(new Option('--engine <name>', 'only the voices of this engine (piper, kokoro, espeak, flite)'))
    .addOption(new Option('--json', 'print {engines, voices} as JSON'))
    .action(async (flags: VoiceFlags & { engine?: string; json?: boolean }) => {
      try {
        const voices = await voicesOf(flags);
        const [engines, listed] = await Promise.all([voices.status(), voices.list()]);
        const shown = listed.filter((voice) => flags.engine === undefined || voice.engine === flags.engine);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ engines, voices: shown }, null, 2)}\n`);
          return;
        }
        process.stdout.write(`${table(shown)}\n`);
        for (const engine of engines)
          if (engine.error && (flags.engine === undefined || engine.engine === flags.engine))
            process.stderr.write(`mediaflow: ${engine.engine}: ${engine.error}\n`);
      } catch (error) {
        fail(error);
      }
    });
}

/** The configured model an id names, or a 400 listing those configured. */
function modelOf(voices: Voices, id: string) {
  const entry = voices.models.find((model) => model.id === id);
  if (!entry) {
    const configured = voices.models.map((model) => model.id).join(', ') || 'none (set MEDIAFLOW_TTS_MODELS)';
    throw paramError(`'${id}' is not a model of MEDIAFLOW_TTS_MODELS: configured are ${configured}`);
  }
  return entry;
}

function fetchCommand(): Command {
  return withSettings(
    new Command('fetch')
      .summary("Fetch a neural voice's model (or prepare one given by path) and check it; print its files' folder")
      .argument('<model>', 'a model of MEDIAFLOW_TTS_MODELS, as <engine>:<name> (piper:amy, kokoro:en)'),
  )
    .option('--allow-private-urls', 'allow a model URL on a loopback/private address')
    .action(async (id: string, flags: VoiceFlags) => {
      const controller = new AbortController();
      const onSigint = () => controller.abort(new DOMException('Interrupted', 'AbortError'));
      process.once('SIGINT', onSigint);
      try {
        const voices = await voicesOf(flags);
        const entry = modelOf(voices, id);
        const ready = await voices.store.ensure(entry, {
          signal: controller.signal,
          onFetch: (url) => process.stderr.write(`mediaflow: fetching ${url}\n`),
        });
        for (const voice of ready.voices)
          process.stderr.write(`mediaflow: ${entry.engine}:${voice.name} (${voice.language})\n`);
        const model = ready.sherpa.vits?.model ?? ready.sherpa.kokoro!.model;
        process.stdout.write(`${model}\n`);
      } catch (error) {
        fail(error);
      } finally {
        process.off('SIGINT', onSigint);
      }
    });
}

function verifyCommand(): Command {
  return withSettings(
    new Command('verify')
      .summary("Re-check neural voices' models: a fetched model's SHA-256, a path's layout and metadata")
      .argument('[model]', 'a model of MEDIAFLOW_TTS_MODELS, as <engine>:<name> (default: every one)'),
  ).action(async (id: string | undefined, flags: VoiceFlags) => {
    try {
      const voices = await voicesOf(flags);
      const entries = id === undefined ? voices.models : [modelOf(voices, id)];
      if (entries.length === 0) process.stderr.write('mediaflow: no model is configured (MEDIAFLOW_TTS_MODELS)\n');
      for (const entry of entries) {
        const checked = await voices.store.verify(entry);
        const what = entry.files ? 'as MEDIAFLOW_TTS_MODELS names it' : 'a whole model with its metadata';
        for (const file of checked)
          process.stdout.write(`${file.path}: OK (${entry.id}, ${what}), SHA-256 ${file.sha256}\n`);
      }
    } catch (error) {
      fail(error);
    }
  });
}

/** `mediaflow voices`: the voices of text to speech; `fetch` and `verify` the neural voices' models. */
export function voicesCommand(): Command {
  const command = new Command()
    .summary("List the voices of text to speech; fetch and verify the neural voices' models")
    .description(
      'The voices installed here, engine by engine (piper, kokoro, espeak, flite), and why an engine cannot speak. ' +
        'The neural voices are the models MEDIAFLOW_TTS_MODELS names: a URL is fetched once into ' +
        "<data-dir>/voices and kept only when each file's SHA-256 is the one given (docs/voice.md).\n\n" +
        'Examples:\n' +
        '  mediaflow voices\n' +
        '  mediaflow voices list --engine espeak --json\n' +
        '  mediaflow voices fetch piper:amy\n' +
        '  mediaflow voices verify',
    )
    .addCommand(listCommand(), { isDefault: true })
    .addCommand(fetchCommand())
    .addCommand(verifyCommand());
  return usageErrorsExitTwo(command);
}
