import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, it } from './helpers/lifecycle.js';
import { importsOf } from './helpers/source-imports.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const EXAMPLE = path.join(ROOT, 'examples/plugin-thumbnail');

describe('the public entry and the plugin contract', () => {
  it("the package's entry (dist/index.js, with types) exports the SDK and what embedding needs", async () => {
    const manifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    assert.deepEqual(manifest.exports['.'], { types: './dist/index.d.ts', default: './dist/index.js' });
    assert.ok(existsSync(path.join(ROOT, 'dist/index.d.ts')), 'npm run build makes dist/index.d.ts');
    // By name, as a plugin or a program imports it.
    const mediaflow = (await import('mediaflow')) as Record<string, unknown>;
    for (const name of [
      'definePlugin',
      'CONTRACT_VERSION',
      'Param',
      'Type',
      'Optional',
      'argv',
      'escapeFilterValue',
      'concatList',
      'mediaError',
      'paramError',
      'MediaflowError',
      'VIDEO_CONTAINERS',
      'QUALITIES',
      'qualityParam',
      'videoEncoder',
      'audioEncoder',
      'videoCodecFor',
      'audioCodecFor',
      'muxerFor',
      'even',
      'evenSizeArgs',
      'AUDIO_CONTAINERS',
      'audioFileEncoder',
      'audioMuxerFor',
      'isAudioFileOf',
      'audioFileCodecFor',
      'audioFileSampleRate',
      'defineConfig',
      'loadRegistry',
      'builtinRegistry',
      'loadPlugins',
      'PluginError',
      'Registry',
      'buildServer',
      'startServer',
      'loadConfig',
      'resolveBinaries',
      'openApiDocument',
    ]) {
      assert.ok(mediaflow[name] !== undefined, `mediaflow exports ${name}`);
    }
    assert.equal(mediaflow.CONTRACT_VERSION, 1);
    const { Param, escapeFilterValue } = mediaflow as {
      Param: {
        url: (k: string, d: string) => object;
        choice: (v: string[], o: object) => object;
        integer: (o: object) => object;
      };
      escapeFilterValue: (v: string) => string;
    };
    // Plain JSON Schema (TypeBox's own symbols aside), which every front end and the API docs read.
    const plain = (schema: object) => JSON.parse(JSON.stringify(schema)) as unknown;
    assert.deepEqual(plain(Param.integer({ minimum: 1, maximum: 9, default: 3, description: 'n' })), {
      type: 'integer',
      minimum: 1,
      maximum: 9,
      default: 3,
      description: 'n',
    });
    assert.deepEqual(plain(Param.choice(['a', 'b'], { default: 'a', description: 'c' })), {
      type: 'string',
      enum: ['a', 'b'],
      default: 'a',
      description: 'c',
    });
    assert.deepEqual(plain(Param.url('video', 'v')), {
      type: 'string',
      description: 'v',
      'x-mediaflow-input': { kind: 'video', list: false },
    });
    assert.equal(escapeFilterValue("it's: [x]"), "it\\\\\\'s\\\\: \\[x\\]");
    // The audio container helpers, so a plugin writing mp3, wav or m4a keeps no table of its own.
    const { audioFileEncoder, audioMuxerFor } = mediaflow as {
      audioFileEncoder: (c: string) => string[];
      audioMuxerFor: (c: string) => string[];
    };
    assert.deepEqual(audioFileEncoder('mp3'), ['-c:a', 'libmp3lame', '-q:a', '2']);
    assert.deepEqual(audioFileEncoder('wav'), ['-c:a', 'pcm_s16le']);
    assert.deepEqual(audioMuxerFor('m4a'), ['-movflags', '+faststart', '-f', 'ipod']);
  });

  it(
    'the built-ins are written with the public contract: ' + 'nothing under src/plugins reaches into src/engine',
    async () => {
      const files: string[] = [];
      for (const entry of await readdir(path.join(ROOT, 'src/plugins'), { recursive: true }))
        if (entry.endsWith('.ts')) files.push(entry);
      assert.ok(files.length >= 12, files.join(', '));
      for (const file of files) {
        // index.ts and builtins.ts are the registry's wiring, not plugins.
        if (file === 'index.ts' || file === 'builtins.ts') continue;
        for (const specifier of await importsOf(path.join(ROOT, 'src/plugins', file))) {
          assert.ok(
            // The modules several plugins share (shared/, captions/); a plugin in a folder of its own (render/,
            // trim-media/, ...) reaches them one level up.
            /^(\.\.\/)+sdk\.js$|^(\.|\.\.)\/(shared|captions)\/|^\.\/[\w-]+\.js$|^node:/.test(specifier),
            `src/plugins/${file} imports ${specifier}`,
          );
        }
      }
    },
  );

  it(
    'the example plugin is a package of its own that uses mediaflow only by name, and type-checks against its ' +
      'published types',
    async () => {
      const manifest = JSON.parse(await readFile(path.join(EXAMPLE, 'package.json'), 'utf8')) as Record<
        string,
        Record<string, string>
      >;
      assert.equal(manifest.name as unknown as string, 'mediaflow-plugin-thumbnail');
      assert.equal(manifest.peerDependencies?.mediaflow, '^0.1.0');
      for (const specifier of await importsOf(path.join(EXAMPLE, 'index.js')))
        assert.ok(specifier === 'mediaflow' || specifier.startsWith('node:'), specifier);
      const tsc = await execa(
        'node',
        [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(EXAMPLE, 'tsconfig.json')],
        { reject: false, cwd: EXAMPLE },
      );
      assert.equal(tsc.exitCode, 0, `${tsc.stdout}\n${tsc.stderr}`);
    },
  );
});
