import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { runCli } from './helpers/mediaflow.js';
import { loadConfig } from '../src/engine/config.js';
import { CONTRACT_VERSION, Optional, Param, Type, type PluginDefinition } from '../src/engine/contract/plugin.js';
import { pluginFlags } from '../src/engine/plugins/plugin-loader.js';
import { Registry } from '../src/engine/plugins/registry.js';
import { builtinRegistry, loadRegistry } from '../src/plugins/index.js';
import { buildServer } from '../src/server/app.js';
import { buildProgram } from '../src/cli/main.js';
import { CLI_COMMANDS, dashed, RESERVED_COMMANDS, RESERVED_PATHS } from '../src/engine/plugins/reserved.js';

const FIXTURES = path.resolve(import.meta.dirname, 'fixtures/plugins');
/** How many built-ins load before any third-party plugin. */
const BUILT_INS = builtinRegistry().list().length;
const fixture = (name: string) => path.join(FIXTURES, name);
/** Loads plugins the way MEDIAFLOW_PLUGINS does, without a config file. */
const loadFromEnv = (value: string) => loadRegistry({ env: { MEDIAFLOW_PLUGINS: value }, configFile: false });

describe('third-party plugins: loading', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-plugins-'));
  });
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** `mediaflow plugins --json`'s row for the echo fixture. */
  const echoRow = async (args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) => {
    const { exitCode, stdout, stderr } = await runCli(['plugins', '--json', ...args], options);
    assert.equal(exitCode, 0, stderr);
    const rows = JSON.parse(stdout) as Array<Record<string, string>>;
    assert.deepEqual(
      rows.slice(0, BUILT_INS).map((row) => row.source),
      Array(BUILT_INS).fill('built-in'),
      'built-ins load first',
    );
    return rows.find((row) => row.name === 'echo');
  };

  it(
    'loads a plugin from MEDIAFLOW_PLUGINS, --plugin (either form, on any command) and ' +
      'mediaflow.config.{json,mjs}',
    async () => {
      const echo = fixture('echo.js');
      const fromEnv = await echoRow([], { env: { MEDIAFLOW_PLUGINS: `  ${echo} ,` } });
      assert.deepEqual(fromEnv, {
        name: 'echo',
        command: 'echo',
        version: '2.3.4',
        source: `${echo} (MEDIAFLOW_PLUGINS)`,
        route: '/echo/',
        summary: 'Write a text to a file',
      });
      // A relative path resolves from the working directory.
      const relative = path.relative(process.cwd(), echo);
      assert.equal((await echoRow(['--plugin', `./${relative}`]))?.source, `./${relative} (--plugin)`);
      assert.equal(
        (await runCli(['--plugin', echo, 'plugins'])).stdout.match(/^echo +2\.3\.4 +\S+ \(--plugin\) +\/echo\/$/m)
          ?.length,
        1,
      );
      assert.equal((await echoRow([`--plugin=${echo}`]))?.version, '2.3.4');

      const json = path.join(tmp, 'json');
      await mkdir(json);
      await writeFile(path.join(json, 'mediaflow.config.json'), JSON.stringify({ plugins: [echo] }));
      assert.equal((await echoRow([], { cwd: json }))?.source, `${echo} (mediaflow.config.json)`);

      // A .mjs config may also hold a plugin object itself.
      const mjs = path.join(tmp, 'mjs');
      await mkdir(mjs);
      await writeFile(
        path.join(mjs, 'mediaflow.config.mjs'),
        `export default { plugins: [${JSON.stringify(echo)}, { contract: 1, name: 'inline', path: '/inline/', ` +
          `summary: 'Inline', params: { type: 'object', properties: {} }, output: () => ({ field: 'output_file', ` +
          `path: '{id}.txt' }), build: ({ output }) => ({ files: { [output]: 'x' }, commands: [] }), message: () ` +
          `=> 'Done' }] };\n`,
      );
      const { stdout } = await runCli(['plugins', '--json'], { cwd: mjs });
      const rows = JSON.parse(stdout) as Array<Record<string, string>>;
      assert.deepEqual(
        rows.slice(BUILT_INS).map((row) => [row.name, row.source]),
        [
          ['echo', `${echo} (mediaflow.config.mjs)`],
          ['inline', 'mediaflow.config.mjs'],
        ],
      );
    },
  );

  it('loads a file named twice once, and a package by name from node_modules', async () => {
    const echo = fixture('echo.js');
    const registry = await loadRegistry({ env: { MEDIAFLOW_PLUGINS: echo }, plugins: [echo], configFile: false });
    assert.deepEqual(
      registry
        .list()
        .map((p) => p.name)
        .slice(BUILT_INS),
      ['echo'],
    );
    const withPackage = await loadFromEnv('mediaflow-plugin-thumbnail');
    assert.deepEqual(withPackage.infoOf('thumbnail'), {
      source: 'mediaflow-plugin-thumbnail (MEDIAFLOW_PLUGINS)',
      version: '1.0.0',
    });
    assert.deepEqual(pluginFlags(['serve', '--plugin', 'a', '--port', '1', '--plugin=b,c', '--', '--plugin', 'd']), [
      'a',
      'b',
      'c',
    ]);
  });

  it('refuses a bad plugin with a message that names it and what is wrong', async () => {
    const cases: Array<[string, RegExp]> = [
      [
        'missing-builder.js',
        /^Plugin 'no-builder' from .*missing-builder\.js \(MEDIAFLOW_PLUGINS\) is invalid: build\(\) is missing/,
      ],
      [
        'duplicate-name.js',
        /^Plugin 'resize_image' from .*duplicate-name\.js.* is invalid: the name is already taken by 'resize_image' \(built-in\)$/,
      ],
      [
        'route-collision.js',
        /^Plugin 'resize-twice' from .* is invalid: path \/Resize_Image is already the route of 'resize_image' \(built-in\)$/,
      ],
      [
        'shadows-uploads.js',
        /^Plugin 'sneaky' from .* is invalid: path \/uploads\/sneaky\/ shadows mediaflow's own route \/uploads$/,
      ],
      [
        'schema-error.js',
        /^Plugin 'bad-schema' from .* is invalid: parameter 'format' has default 'avi', which is not one of mp4, webm$/,
      ],
      [
        'misspelt-keyword.js',
        /^Plugin 'typo' from .*misspelt-keyword\.js \(MEDIAFLOW_PLUGINS\) is invalid: parameter 'size' has unknown schema keyword 'defualt' \(did you mean 'default'\?\)$/,
      ],
      [
        'wrong-contract.js',
        /^Plugin 'from-the-future' from .* is invalid: it targets plugin contract 2, but this mediaflow implements contract 1 \(incompatible\): upgrade mediaflow/,
      ],
      [
        'no-default.js',
        /^Plugin '.*no-default\.js' from MEDIAFLOW_PLUGINS could not be loaded: the module has no default export/,
      ],
      [
        'does-not-exist.js',
        /^Plugin '.*does-not-exist\.js' from MEDIAFLOW_PLUGINS could not be loaded: cannot be found: .*does-not-exist\.js does not exist$/,
      ],
    ];
    for (const [file, message] of cases) {
      await assert.rejects(loadFromEnv(fixture(file)), (error: Error) => {
        assert.match(error.message, message, file);
        return true;
      });
    }
    await assert.rejects(
      loadFromEnv('mediaflow-plugin-nowhere'),
      /^PluginError: Plugin 'mediaflow-plugin-nowhere' from MEDIAFLOW_PLUGINS could not be loaded: cannot be found: no package 'mediaflow-plugin-nowhere' is installed/,
    );
  });

  it('says where a plugin fails to import (file and line), and how to compile a TypeScript one', async () => {
    const dir = path.join(tmp, 'broken');
    await mkdir(dir);
    const write = async (name: string, text: string) => {
      await writeFile(path.join(dir, name), text);
      return path.join(dir, name);
    };
    // Through the real CLI: under the test runner, import() goes through its own transform, not Node's.
    const failure = async (file: string) => {
      const { exitCode, stderr } = await runCli(['plugins'], { env: { MEDIAFLOW_PLUGINS: file } });
      assert.equal(exitCode, 1, `${file} is refused`);
      return stderr.trim();
    };
    // A syntax error, in the plugin or in a module it imports: Node's import() names neither place.
    const syntax = await write('syntax.js', "export default {\n  name: 'x',\n  oops: ,\n};\n");
    assert.match(
      await failure(syntax),
      /could not be loaded: importing it failed: SyntaxError: Unexpected token ',' \(at .*broken\/syntax\.js:3\)$/,
    );
    const nested = await write('nested.js', "import plugin from './syntax.js';\nexport default plugin;\n");
    assert.match(
      await failure(nested),
      /^mediaflow: Plugin '.*nested\.js' .*importing it failed: SyntaxError: Unexpected token ',' \(at .*broken\/syntax\.js:3\)$/,
    );
    // A runtime error at the module's top level, and an import of a package that is not installed.
    const runtime = await write('runtime.js', 'const ready = true;\nnotDefined.call(ready);\nexport default {};\n');
    assert.match(
      await failure(runtime),
      /importing it failed: ReferenceError: notDefined is not defined \(at .*broken\/runtime\.js:2:1\)$/,
    );
    const missing = await write(
      'missing.js',
      "// needs a helper\nimport helper from 'mediaflow-helper-nowhere';\nexport default helper;\n",
    );
    assert.match(
      await failure(missing),
      /importing it failed: Cannot find package 'mediaflow-helper-nowhere' imported from .*missing\.js \(at .*broken\/missing\.js:2\)$/,
    );
    // TypeScript: this Node.js does not run it, so the message says how to compile it.
    const ts = await write('plugin.ts', 'export default {} as unknown;\n');
    const message = await failure(ts);
    assert.match(
      message,
      /could not be loaded: it is TypeScript, which this Node\.js does not run: compile it to JavaScript/,
    );
    assert.match(
      message,
      /npx tsc, with a tsconfig\.json such as \{"compilerOptions":\{"target":"ES2022","module":"NodeNext"/,
    );
  });

  it(
    "shows the version of a plugin object's package, in mediaflow plugins and the registry the API " + 'document reads',
    async () => {
      const dir = path.join(tmp, 'objects');
      await mkdir(dir);
      // The config file's own package: the version of the plugins written inline in it.
      await writeFile(
        path.join(dir, 'package.json'),
        JSON.stringify({ name: 'my-media-app', version: '3.1.4', type: 'module' }),
      );
      const thumbnail = path.resolve(import.meta.dirname, '../node_modules/mediaflow-plugin-thumbnail/index.js');
      await writeFile(
        path.join(dir, 'mediaflow.config.mjs'),
        `import thumbnail from ${JSON.stringify(thumbnail)};\n` +
          "export default { plugins: [thumbnail, { contract: 1, name: 'inline', path: '/inline/', summary: " +
          "'Inline', params: { type: 'object', properties: {} }, output: () => ({ field: 'output_file', path: " +
          "'{id}.txt' }), build: ({ output }) => ({ files: { [output]: 'x' }, commands: [] }), message: () => " +
          "'Done' }] };\n",
      );
      const { exitCode, stdout, stderr } = await runCli(['plugins', '--json'], { cwd: dir });
      assert.equal(exitCode, 0, stderr);
      const rows = JSON.parse(stdout) as Array<Record<string, string>>;
      assert.deepEqual(
        rows.slice(BUILT_INS).map((row) => [row.name, row.version, row.source]),
        [
          ['thumbnail', '1.0.0', 'mediaflow.config.mjs'],
          ['inline', '3.1.4', 'mediaflow.config.mjs'],
        ],
      );
      const registry = await loadRegistry({ cwd: dir });
      assert.deepEqual(registry.infoOf('thumbnail'), { source: 'mediaflow.config.mjs', version: '1.0.0' });
    },
  );

  it('refuses a bad config file, naming it', async () => {
    const dir = path.join(tmp, 'bad-config');
    await mkdir(dir);
    await writeFile(path.join(dir, 'mediaflow.config.json'), JSON.stringify({ plugin: ['x'] }));
    await assert.rejects(
      loadRegistry({ cwd: dir }),
      /^PluginConfigError: mediaflow.config.json is not a usable mediaflow config file: unknown key 'plugin' \(it may hold: plugins\)$/,
    );
    await writeFile(path.join(dir, 'mediaflow.config.js'), 'export default {};\n');
    await assert.rejects(
      loadRegistry({ cwd: dir }),
      /there are mediaflow.config.js and mediaflow.config.json in .*: keep one/,
    );
  });

  it('refuses to serve, and to run any command, with a bad plugin: exit 1, the message on stderr', async () => {
    const bad = fixture('route-collision.js');
    const serve = await runCli(['serve', '--port', '0', '--data-dir', path.join(tmp, 'data')], {
      env: { MEDIAFLOW_PLUGINS: bad },
    });
    assert.equal(serve.exitCode, 1);
    assert.match(
      serve.stderr,
      /^mediaflow: Plugin 'resize-twice' from .*route-collision\.js \(MEDIAFLOW_PLUGINS\) is invalid: path \/Resize_Image is already the route of 'resize_image'/,
    );
    assert.equal(serve.stdout, '');
    // A plugin named like a command of mediaflow's own is refused by name, instead of breaking commander.
    const command = await runCli(['plugins', '--plugin', fixture('reserved-command.js')]);
    assert.equal(command.exitCode, 1);
    assert.match(
      command.stderr,
      /^mediaflow: Plugin 'quickstart' from .*reserved-command\.js \(--plugin\) is invalid/m,
    );
    assert.match(command.stderr, /: name 'quickstart' is a command of mediaflow itself$/m);
    const flag = await runCli(['resize-image', '--help', '--plugin', fixture('wrong-contract.js')]);
    assert.equal(flag.exitCode, 1);
    assert.match(flag.stderr, /Plugin 'from-the-future' .* targets plugin contract 2/);
  });
});

describe('reserved names', () => {
  it("are exactly the CLI's own commands and the first segments of the server's own routes", async () => {
    const registry = builtinRegistry();
    const operations = new Set(registry.list().map((plugin) => dashed(plugin.name)));
    const names = buildProgram(registry).commands.map((command) => command.name());
    const commands = names.filter((name) => !operations.has(name));
    assert.deepEqual(commands, [...CLI_COMMANDS], 'the CLI builds its own commands from the list, in its order');
    assert.deepEqual([...commands, 'help'].sort(), [...RESERVED_COMMANDS].sort());

    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-reserved-'));
    const config = loadConfig({ MEDIAFLOW_DATA_DIR: dataDir });
    const { app } = await buildServer({ config, registry, logger: false as never });
    try {
      await app.ready();
      const routes = new Set(registry.list().map((plugin) => plugin.path.replace(/\/+$/, '')));
      // Top-level lines of the route tree: each a route's first segment (`*` is the /uploads/ wildcard).
      const tree = app.printRoutes({ commonPrefix: false });
      const firsts = [...tree.matchAll(/^[├└]── (\/[^/\s]*)/gm)].map(([, first]) => first!);
      const fixed = firsts.filter((first) => !routes.has(first));
      const missing = fixed.filter((first) => !RESERVED_PATHS.includes(first));
      assert.deepEqual(missing, [], 'every fixed route of the server is reserved');
      assert.ok(fixed.includes('/fonts') && fixed.includes('/health'), fixed.join(' '));
    } finally {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('third-party plugins: registration checks', () => {
  const base = (overrides: Record<string, unknown>): PluginDefinition =>
    ({
      contract: CONTRACT_VERSION,
      name: 'probe-me',
      path: '/probe-me/',
      summary: 'A plugin under test',
      params: Type.Object({ image_url: Param.url('image', 'Image') }),
      output: () => ({ field: 'output_file', path: '{id}.jpg' }),
      build: ({ output }: { output: string }) => [output],
      message: () => 'Done',
      ...overrides,
    }) as unknown as PluginDefinition;
  const problem = (overrides: Record<string, unknown>) => {
    try {
      builtinRegistry().register(base(overrides), './probe-me.js');
      return undefined;
    } catch (error) {
      return (error as Error).message.replace(/^Plugin '[^']*' from \.\/probe-me\.js is invalid: /, '');
    }
  };

  it('accepts a sound plugin and keeps its source and version', () => {
    const registry = new Registry();
    registry.register(base({ version: '0.9.0' }), 'pkg');
    assert.deepEqual(registry.infoOf('probe-me'), { source: 'pkg', version: '0.9.0' });
    registry.register(base({ name: 'other', path: '/other/' }), './other.js', { version: '1.2.3' });
    assert.deepEqual(registry.infoOf('other'), { source: './other.js', version: '1.2.3' });
  });

  it('checks shape, names, routes, contract, schema and output', () => {
    const cases: Array<[Record<string, unknown>, string | RegExp]> = [
      [{ contract: undefined }, /^it does not state the plugin contract it targets: add `contract: CONTRACT_VERSION`/],
      [{ contract: '1' }, "contract must be the whole number of the plugin contract it targets, got '1'"],
      [{ contract: 0.5 }, /^contract must be the whole number/],
      [{ name: 'Bad Name' }, 'name must be lower-case letters, digits, - or _'],
      [{ name: 'serve' }, "name 'serve' is a command of mediaflow itself"],
      [{ name: 'worker' }, "name 'worker' is a command of mediaflow itself"],
      [{ name: 'quickstart' }, "name 'quickstart' is a command of mediaflow itself"],
      [{ name: 'merge_audios' }, "the name is already taken by 'merge-audios' (built-in)"],
      [{ path: 'no-slash' }, /^path 'no-slash' must start with \//],
      [{ path: '/a//b' }, /^path '\/a\/\/b' must start with \//],
      [{ path: '/health' }, "path /health shadows mediaflow's own route /health"],
      [{ path: '/docs/mine' }, "path /docs/mine shadows mediaflow's own route /docs"],
      [{ path: '/fonts/' }, "path /fonts/ shadows mediaflow's own route /fonts"],
      [{ path: '/openapi.json' }, /^path '\/openapi.json' must start/],
      [{ path: '/merge-audios' }, "path /merge-audios is already the route of 'merge-audios' (built-in)"],
      [{ summary: '' }, 'summary is missing'],
      [{ params: { type: 'string' } }, 'params must be a TypeBox object schema (Type.Object({...}))'],
      [
        { params: Type.Object({ items: Type.Array(Type.String(), { description: 'Items' }) }) },
        "parameter 'items' has unsupported type 'array' (use string, integer, number or boolean)",
      ],
      [
        { params: Type.Object({ camelCase: Param.text({ description: 'x', maxLength: 1 }) }) },
        "parameter 'camelCase' must be snake_case",
      ],
      [
        { params: Type.Object({ size: Type.Integer({ minimum: 1, maximum: 9 }) }) },
        "parameter 'size' has no description (--help and the API docs show it)",
      ],
      [
        { params: Type.Object({ size: Param.integer({ minimum: 9, maximum: 1, description: 'Size' }) }) },
        "parameter 'size' has minimum 9 above its maximum 1",
      ],
      [
        { params: Type.Object({ size: Param.integer({ minimum: 1, maximum: 9, default: 12, description: 'Size' }) }) },
        "parameter 'size' has default 12, which is above its maximum 9",
      ],
      [
        { params: Type.Object({ fmt: Param.choice(['PNG', 'jpg'], { description: 'Format' }) }) },
        "parameter 'fmt' has enum value 'PNG'; choices must be lower-case and not empty",
      ],
      [
        { params: Type.Object({ code: Param.text({ description: 'Code', maxLength: 9, pattern: '([a-z' }) }) },
        /^parameter 'code' has a pattern that is not a regular expression/,
      ],
      [
        {
          params: Type.Object({
            code: Param.text({ description: 'Code', maxLength: 9, pattern: '^[a-z]+$', default: '42' }),
          }),
        },
        "parameter 'code' has default '42', which is not matched by its pattern ^[a-z]+$",
      ],
      [
        {
          params: Type.Object({
            clip: Type.String({ description: 'Clip', 'x-mediaflow-input': { kind: 'hologram', list: false } }),
          }),
        },
        "input parameter 'clip' has kind 'hologram' (use audio, video, image, subtitle, media)",
      ],
      [
        { params: Type.Object({ size: Type.Integer({ description: 'Size', minimum: 1, maximun: 9 }) }) },
        "parameter 'size' has unknown schema keyword 'maximun' (did you mean 'maximum'?)",
      ],
      [
        { params: Type.Object({ link: Type.String({ description: 'Link', format: 'uri' }) }) },
        /^parameter 'link' has unknown schema keyword 'format' \(mediaflow reads type, description, enum, default, examples/,
      ],
      [
        {
          params: Type.Object({ size: Param.integer({ minimum: 1, maximum: 9, examples: [20], description: 'Size' }) }),
        },
        "parameter 'size' has example 20, which is above its maximum 9",
      ],
      [{ build: 'not a function' }, 'build() is missing (it must be a function)'],
      [{ check: 42 }, 'check must be a function'],
      [{ checkParams: 'yes' }, 'checkParams must be a function'],
      [{ inputs: [] }, 'inputs must be a function'],
      [
        { params: Type.Object({ a: Param.values({ description: 'A' }), b: Param.values({ description: 'B' }) }) },
        "parameters 'a' and 'b' are both x-mediaflow-values: a plugin has one at most",
      ],
      [
        { params: Type.Object({ doc: Param.document(Type.Object({}), { description: '' }) }) },
        "parameter 'doc' has no description (--help and the API docs show it)",
      ],
      [
        {
          params: Type.Object({
            doc: Param.document(Type.Object({}), { description: 'Doc', examples: ['text' as never] }),
          }),
        },
        "parameter 'doc' has examples that are not a list of objects",
      ],
      [
        { output: () => ({ field: 'output_file', path: 'fixed-name.jpg' }) },
        "output() returned path 'fixed-name.jpg'; it must contain {id}, the job's random id",
      ],
      [
        { output: () => ({ field: 'output_file', path: '{id}/../../etc/passwd' }) },
        /^output\(\) returned path '\{id\}\/\.\.\/\.\.\/etc\/passwd'; it must be a relative path/,
      ],
      [{ output: () => ({ field: 'message', path: '{id}.jpg' }) }, /^output\(\) returned field 'message'/],
      [
        {
          output: () => {
            throw new Error('no params');
          },
        },
        'output() threw with sample params: no params',
      ],
    ];
    for (const [overrides, expected] of cases) {
      const actual = problem(overrides);
      if (expected instanceof RegExp) assert.match(String(actual), expected, JSON.stringify(Object.keys(overrides)));
      else assert.equal(actual, expected, JSON.stringify(Object.keys(overrides)));
    }
    // Optional parameters, with or without defaults, are fine.
    assert.equal(
      problem({
        params: Type.Object({
          image_url: Param.url('image', 'Image'),
          width: Optional(Param.integer({ minimum: 1, maximum: 9, description: 'W' })),
        }),
      }),
      undefined,
    );
  });
});

describe('third-party plugins: failures at run time', () => {
  let app: Awaited<ReturnType<typeof buildServer>>['app'];
  let base: string;
  let dataDir: string;
  const log: string[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-plugins-run-'));
    const registry = await loadFromEnv(`${fixture('throws.js')},${fixture('echo.js')}`);
    const config = loadConfig({ MEDIAFLOW_DATA_DIR: dataDir, MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0' });
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        log.push(chunk.toString());
        done();
      },
    });
    ({ app } = await buildServer({ config, registry, logger: { level: 'error', stream } as never }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await app?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const post = async (route: string, fields: Record<string, string>) => {
    const res = await fetch(`${base}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(fields),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };

  it(
    'fails only its own request: 500 naming the plugin (no server path), ' + 'or its own 422; the details are logged',
    async () => {
      const boom = await post('/boom/', { text: 'hi' });
      assert.deepEqual(boom, {
        status: 500,
        body: { error: "Plugin 'boom' failed: kaboom reading <path>", code: 'MF_ERR_INTERNAL' },
      });
      const logged = log.join('');
      assert.match(logged, /Plugin 'boom' failed/);
      assert.match(
        logged,
        /TypeError: kaboom reading \/srv\/mediaflow\/secret\/config\.json/,
        'the original error, with its stack, is in the log',
      );
      assert.match(logged, /throws\.js/);

      assert.deepEqual(await post('/refuse/', { text: 'that' }), {
        status: 422,
        body: { error: "Cannot use 'that'", code: 'MF_ERR_MEDIA' },
      });
      assert.deepEqual(await post('/no-plan/', { text: 'x' }), {
        status: 500,
        body: {
          error: "Plugin 'no-plan' failed: build() returned undefined, not an argv (string[]) or a plan ({ commands })",
          code: 'MF_ERR_INTERNAL',
        },
      });
      assert.deepEqual(await post('/bad-parts/', { text: 'x' }), {
        status: 500,
        body: {
          error:
            "Plugin 'bad-parts' failed: build() returned a plan whose parts are not one number of seconds " +
            '(0 or more) per command',
          code: 'MF_ERR_INTERNAL',
        },
      });
      // Parameters are still checked before any plugin code runs.
      assert.equal((await post('/boom/', {})).status, 400);

      // The process and the other operations carry on.
      const echo = await post('/echo/', { text: 'still here', repeat: '2' });
      assert.equal(echo.status, 200, JSON.stringify(echo.body));
      assert.equal(echo.body.message, 'Text written successfully');
      const text = await readFile(
        path.join(dataDir, 'uploads', new URL(echo.body.text_file!).pathname.replace(/^\/uploads\//, '')),
        'utf8',
      );
      assert.equal(text, 'still here\nstill here\n');
      assert.equal((await fetch(`${base}/health`)).status, 200);
    },
  );

  it('fails only its own CLI run: exit 1 with the same message', async () => {
    const env = { MEDIAFLOW_PLUGINS: fixture('throws.js') };
    const boom = await runCli(['boom', '--text', 'hi'], { env });
    assert.equal(boom.exitCode, 1);
    assert.equal(boom.stderr.trim(), "mediaflow: Plugin 'boom' failed: kaboom reading <path>");
    // The details, for the plugin's author, when asked for.
    const debug = await runCli(['boom', '--text', 'hi'], { env: { ...env, MEDIAFLOW_LOG_LEVEL: 'debug' } });
    assert.match(
      debug.stderr,
      /caused by TypeError: kaboom reading \/srv\/mediaflow\/secret\/config\.json\n\s+at .*throws\.js/,
    );
    const refuse = await runCli(['refuse', '--text', 'that'], { env });
    assert.equal(refuse.exitCode, 1);
    assert.equal(refuse.stderr.trim(), "mediaflow: Cannot use 'that'");
  });
});

describe('--help from the schema', () => {
  it(
    'shows every field of a built-in as a flag, with its description, range, choices, default or that it is ' +
      'required',
    async () => {
      const { exitCode, stdout, stderr } = await runCli(['images-to-video', '--help']);
      assert.equal(exitCode, 0, stderr);
      const flat = stdout.replace(/\s+/g, ' ');
      for (const text of [
        'Usage: mediaflow images-to-video [options]',
        '--image-urls <value>',
        '(URLs or local paths, comma-separated) (required)',
        '--seconds-per-image <value>',
        '(default: "5")',
        '--format <value>',
        '(choices: mp4, avi, mov, mkv, webm) (default: "mp4")',
        '--out-dir <dir> folder for the output (in a folder of its own, as the server lays it out) (default: ".")',
        '-o, --output <file> the file to write the result to',
        '--plugin <module> load an operation plugin',
      ]) {
        assert.ok(flat.includes(text), `${text} in ${stdout}`);
      }
    },
  );

  it("shows the example plugin's fields when it is loaded, and lists it among the commands", async () => {
    const env = { MEDIAFLOW_PLUGINS: 'mediaflow-plugin-thumbnail' };
    const help = await runCli(['thumbnail', '--help'], { env });
    assert.equal(help.exitCode, 0, help.stderr);
    const flat = help.stdout.replace(/\s+/g, ' ');
    assert.ok(flat.includes('Take one frame of a video, at a time code, as a picture.'), help.stdout);
    assert.ok(flat.includes('--video-url <value> Direct URL of the video (URL or local path) (required)'), help.stdout);
    assert.ok(flat.includes('--format <value> Picture format (choices: jpg, png, webp) (default: "jpg")'), help.stdout);
    const root = await runCli(['--help'], { env });
    assert.match(root.stdout, /^ {2}thumbnail \[options\] +Take one frame/m);
    assert.match(root.stdout, /^ {2}plugins \[options\] +List the loaded operation plugins/m);
    assert.doesNotMatch((await runCli(['--help'])).stdout, /thumbnail/);
  });
});
