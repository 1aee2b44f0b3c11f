import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { FORMAT_KEYWORD } from '../src/engine/contract/plugin.js';
import { JOB_STATUSES } from '../src/jobs/job.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_METADATA_BYTES } from '../src/server/limits.js';
import { builtinRegistry } from '../src/plugins/index.js';
import * as sdk from '../src/sdk.js';
import { withSettingsTable } from '../scripts/config-docs.js';
import { describe, it } from './helpers/lifecycle.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The anchors GitHub gives a Markdown page's headings: lower case, punctuation dropped, spaces as dashes. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+?)\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}

/** Fails unless `file`, a Markdown page of the repository, has a heading whose anchor is `anchor`. */
async function assertAnchor(file: string, anchor: string, citedBy: string): Promise<void> {
  const anchors = anchorsOf(await readFile(file, 'utf8'));
  assert.ok(
    anchors.has(anchor),
    `${citedBy} links to ${path.relative(ROOT, file)}#${anchor}, which is no heading of that page`,
  );
}

describe('the README and docs/', () => {
  it('hold the settings table config-table.ts makes (`npm run docs:config` after changing it)', async () => {
    const page = await readFile(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    assert.equal(page, withSettingsTable(page));
  });

  it('and the docs cite no file outside the repository, and every file and heading they link to exists', async () => {
    const pages = [
      'README.md',
      'CONTRIBUTING.md',
      ...(await readdir(path.join(ROOT, 'docs'))).map((name) => `docs/${name}`),
      'examples/plugin-thumbnail/README.md',
      'integrations/n8n/README.md',
    ];
    for (const page of pages) {
      const text = await readFile(path.join(ROOT, page), 'utf8');
      // The design documents the project was built from are not shipped with it.
      assert.doesNotMatch(
        text,
        /CONTRACT\.md|ARCHITECTURE\.md|STYLE\.md|\.\.\/shared\//,
        `${page} cites a file outside the repository`,
      );
      for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]*))?\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        // A link of the form (#heading) is to the page itself.
        const file = path.resolve(ROOT, target ? path.dirname(page) : page, target!);
        assert.ok(
          file.startsWith(ROOT + path.sep) && existsSync(file),
          `${page} links to ${target}, which is not a file of the repository`,
        );
        if (anchor && file.endsWith('.md')) await assertAnchor(file, anchor, page);
      }
    }
  });
});

describe('the README', () => {
  it('guides in at most 300 lines: the two commands, and every operation in a table linking into docs/', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const lines = readme.trimEnd().split('\n').length;
    assert.ok(lines <= 300, `the README has ${lines} lines; the reference belongs in docs/`);
    // CI's tooling greps for both commands, and .ci/run runs the README's test command.
    for (const command of ['npm install && npm start', 'npm test'])
      assert.ok(readme.includes(command), `the README says ${command}`);
    assert.match(await readFile(path.join(ROOT, '.ci/run'), 'utf8'), /^npm test\b/m);
    const rows = readme.split('\n').filter((line) => line.startsWith('| `/'));
    for (const plugin of builtinRegistry().list()) {
      const row = rows.find((line) => line.startsWith(`| \`${plugin.path}\` |`));
      assert.ok(row, `${plugin.path} has a row in the README's table of operations`);
      assert.match(row, /\]\(docs\/[\w-]+\.md(#[\w-]+)?\)/, `${plugin.path}'s row links into docs/`);
    }
  });
});

describe('the code', () => {
  it('cites only documents of the repository in its comments and messages', async () => {
    // Spelt in parts, so that this file does not match itself.
    const documents = ['CONTRACT', 'ARCHITECTURE', 'STYLE', 'DEVELOPERS'];
    const outside = new RegExp(documents.map((name) => `${name}\\.md`).join('|'));
    for (const folder of ['src', 'test', 'scripts', 'bench', 'examples', '.ci']) {
      const all = await readdir(path.join(ROOT, folder), { recursive: true });
      const names = all.filter((name) => /\.(ts|js|sh)$|^run$/.test(name) && !name.includes('node_modules'));
      for (const name of names) {
        const text = await readFile(path.join(ROOT, folder, name), 'utf8');
        assert.doesNotMatch(text, outside, `${folder}/${name} cites a document outside the repository`);
        for (const [, page, anchor] of text.matchAll(/\b(docs\/[\w-]+\.md)(?:#([a-z0-9-]+))?/g)) {
          assert.ok(existsSync(path.join(ROOT, page!)), `${folder}/${name} cites ${page}`);
          if (anchor) await assertAnchor(path.join(ROOT, page!), anchor, `${folder}/${name}`);
        }
      }
    }
  });
});

describe('the tests', () => {
  it(
    'take describe/it from helpers/lifecycle.js, ' + "so Node's own runner runs them too (docs/architecture.md)",
    async () => {
      const all = await readdir(path.join(ROOT, 'test'), { recursive: true });
      const files = all.filter((name) => name.endsWith('.test.ts'));
      assert.ok(files.length > 30, `${files.length} test files`);
      for (const name of files) {
        const text = await readFile(path.join(ROOT, 'test', name), 'utf8');
        assert.doesNotMatch(text, /from '[v]itest'/, `test/${name} imports vitest`);
      }
    },
  );
});

describe('the README, docs/ and the plugin guide against the code', () => {
  it('states the metadata and Idempotency-Key limits and the job statuses as the code has them', async () => {
    const jobs = await readFile(path.join(ROOT, 'docs/jobs.md'), 'utf8');
    assert.match(jobs, new RegExp(`metadata \\(at most ${MAX_METADATA_BYTES} bytes\\)`));
    assert.match(jobs, new RegExp(`a string of at most ${MAX_METADATA_BYTES} bytes`));
    assert.match(jobs, new RegExp(`\\(1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`));
    const [first, second, ...final] = JOB_STATUSES.map((status) => `\`${status}\``);
    assert.ok(
      jobs.includes(`| \`status\` | ${first}, ${second}, then one of ${final.join(', ')} (final) |`),
      `docs/jobs.md's job table lists ${JOB_STATUSES.join(', ')}`,
    );
  });

  it('lists every format each operation accepts in its table, and says how resize_image sizes', async () => {
    const operations = await readFile(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const rows = operations.split('\n').filter((line) => line.startsWith('| ') && line.includes('` | `'));
    for (const plugin of builtinRegistry().list()) {
      const row = rows.find((line) => line.includes(`| \`${plugin.path}\` |`));
      assert.ok(row, `${plugin.path} has a row`);
      for (const [key, property] of Object.entries(plugin.params.properties) as Array<
        [string, Record<string, unknown>]
      >) {
        if (!property[FORMAT_KEYWORD]) continue;
        for (const format of property.enum as string[])
          assert.ok(row.includes(`\`${format}\``), `${plugin.path}'s row names ${key} ${format}`);
      }
    }
    const resize = rows.find((line) => line.includes('`/resize_image/`'))!;
    assert.match(resize, /stretched to exactly this size/);
    assert.match(operations, /\*\*resize_image\*\* stretches the image to exactly `width` x `height`/);
  });

  it('says which routes stay open when an API key is set, and how /metrics is protected', async () => {
    const operations = await readFile(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const settings = await readFile(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    const row = settings.split('\n').find((line) => line.startsWith('| `MEDIAFLOW_API_KEY`'))!;
    for (const route of ['`/health`', '`/uploads/...`', '`/openapi.json`', '`/docs`'])
      assert.ok(row.includes(route), `${route} is named open`);
    assert.match(row, /`\/metrics` need/);
    assert.match(operations, /`GET \/metrics` .*\n?.*Authorization: Bearer/);
  });

  it('documents each encoder helper of the SDK in docs/plugins.md, with its signature', async () => {
    const guide = await readFile(path.join(ROOT, 'docs/plugins.md'), 'utf8');
    const helpers = Object.entries(sdk).filter(
      ([name, value]) =>
        typeof value === 'function' &&
        /Encoder$|CodecFor$|MuxerFor$|^muxerFor$|^even|^isAudioFileOf$|SampleRate$/.test(name),
    );
    assert.ok(helpers.length >= 10, helpers.map(([name]) => name).join(', '));
    for (const [name] of helpers)
      assert.match(
        guide,
        new RegExp(`\\| \`${name}\\([A-Za-z]+: [^)]*\\)(: [\\w |[\\]]+)?\` \\|`),
        `${name} with its signature`,
      );
    for (const constant of ['VIDEO_CONTAINERS', 'AUDIO_CONTAINERS', 'QUALITIES'])
      assert.ok(guide.includes(`\`${constant}\``), constant);
    // Which facts may be missing, so plugins guard them.
    assert.match(guide, /### Facts[\s\S]*`duration` \| when the container says/);
  });
});
