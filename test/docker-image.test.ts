import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../src/engine/config.js';
import { describe, it } from './helpers/lifecycle.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFile(path.join(ROOT, file), 'utf8');

/** The sources of every COPY of a Dockerfile, without their trailing slash. */
const copySources = (dockerfile: string) =>
  [...dockerfile.matchAll(/^COPY (.+) \S+$/gm)].flatMap(([, sources]) =>
    sources!.split(' ').map((source) => source.replace(/\/$/, '')),
  );

/**
 * Whether a .dockerignore pattern leaves a path out: Docker anchors patterns at the context's root, `*` stays
 * within a folder, `**\/` is any number of folders, and a folder left out takes what is inside it.
 */
function dockerIgnores(pattern: string, file: string): boolean {
  const source = pattern
    .split('**/')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:.*/)?');
  const regex = new RegExp(`^${source}$`);
  const parts = file.split('/');
  return parts.some((_, i) => regex.test(parts.slice(0, i + 1).join('/')));
}

// Docker has no engine where the tests run, so the image is never built here: these check what can be checked
// without one, that its COPYs name files of the repository and that it installs and starts as docs/deploy.md says.
describe('the Dockerfile', () => {
  it('copies files the repository tracks, and .dockerignore leaves none of them out', async () => {
    const sources = copySources(await read('Dockerfile'));
    const patterns = (await read('.dockerignore')).split('\n').filter((line) => line && !line.startsWith('#'));
    assert.ok(sources.length > 0);
    for (const source of sources) {
      const tracked = execFileSync('git', ['ls-files', '--', source], { cwd: ROOT, encoding: 'utf8' });
      assert.notEqual(tracked, '', `the Dockerfile copies ${source}, which git does not track`);
      for (const pattern of patterns)
        assert.ok(!dockerIgnores(pattern, source), `.dockerignore's ${pattern} leaves out ${source}`);
    }
    assert.ok(dockerIgnores('**/node_modules', 'examples/plugin-thumbnail/node_modules/x'));
    assert.ok(!dockerIgnores('dist', 'src/dist-like'));
  });

  it('copies what the install builds from and the server reads, and every workspace the lock file names', async () => {
    const sources = copySources(await read('Dockerfile'));
    const pipelines = path.relative('.', loadConfig({}).pipelinesDir);
    const templates = path.relative(ROOT, loadConfig({}).templatesDir);
    // The build's own modules too (scripts/one-file-package.js), which it imports by relative path.
    const buildModules = [...(await read('scripts/build.js')).matchAll(/from '\.\/([^']+)'/g)].map(
      ([, file]) => `scripts/${file}`,
    );
    assert.ok(buildModules.length > 0);
    const build = ['package.json', 'package-lock.json', 'scripts/build.js', ...buildModules, 'bin', 'src'];
    for (const needed of [...build, pipelines, templates])
      assert.ok(sources.includes(needed), `the Dockerfile copies ${needed}`);
    const { workspaces } = JSON.parse(await read('package.json')) as { workspaces: string[] };
    for (const glob of workspaces) {
      const parent = glob.replace(/\/\*$/, '');
      for (const name of await readdir(path.join(ROOT, parent))) {
        const manifest = `${parent}/${name}/package.json`;
        assert.ok(
          sources.some((source) => manifest === source || manifest.startsWith(`${source}/`)),
          `the Dockerfile copies ${manifest}`,
        );
      }
    }
  });

  it('installs as the production install does, and serves on 0.0.0.0:8000 with its data in /data', async () => {
    const dockerfile = await read('Dockerfile');
    const install = 'npm ci --omit=dev --no-audit --no-fund';
    assert.ok((await read('scripts/check-production-install.sh')).includes(install));
    assert.match(dockerfile, new RegExp(`^RUN ${install}`, 'm'));
    assert.match(dockerfile, /^FROM node:20-bookworm-slim$/m);
    assert.match(dockerfile, /apt-get install -y --no-install-recommends ffmpeg fonts-noto-core/);
    const env = /^ENV (.+)$/m.exec(dockerfile)![1]!.split(' ');
    assert.deepEqual(env, ['HOST=0.0.0.0', 'PORT=8000', 'MEDIAFLOW_DATA_DIR=/data']);
    assert.match(dockerfile, /^EXPOSE 8000$/m);
    assert.match(dockerfile, /^VOLUME \/data$/m);
    assert.match(dockerfile, /^CMD \["node", "bin\/mediaflow\.js", "serve"\]$/m);
  });

  it("is what docs/jobs.md's Compose file builds, with mediaflow on 0.0.0.0 for n8n to reach", async () => {
    const page = await read('docs/jobs.md');
    const block = /```yaml\n((?:.*\n)*?)\s*```/.exec(page.slice(page.indexOf('## n8n, Make and Zapier')))![1]!;
    const compose = parse(block.replace(/^ {2}/gm, '')) as {
      services: Record<string, { build?: string; environment?: string[]; volumes?: string[] }>;
    };
    const mediaflow = compose.services.mediaflow!;
    assert.equal(mediaflow.build, '.');
    assert.ok(mediaflow.environment!.includes('HOST=0.0.0.0'));
    assert.ok(mediaflow.volumes!.includes('mediaflow-data:/data'));
    assert.ok(compose.services.n8n!.environment!.includes('WEBHOOK_URL=http://n8n:5678/'));
  });
});
