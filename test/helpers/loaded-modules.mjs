// Preloaded into a child process (`node --import <this> ...`): writes the file URL of every module the process loads,
// one a line, to the file MEDIAFLOW_TEST_LOADED_MODULES names. ES modules are seen by a load hook as they load;
// CommonJS ones (a package's own requires, which the hook does not see) are read from require's cache at exit.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.MEDIAFLOW_TEST_LOADED_MODULES;
if (!file) throw new Error('loaded-modules.mjs: set MEDIAFLOW_TEST_LOADED_MODULES to the file to write');

// The hooks run on a thread of their own, which sees the same environment.
const hooks = `
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.MEDIAFLOW_TEST_LOADED_MODULES, url + '\\n');
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

const { cache } = createRequire(import.meta.url);
process.on('exit', () => {
  const urls = Object.keys(cache).map((path) => pathToFileURL(path).href);
  appendFileSync(file, urls.map((url) => `${url}\n`).join(''));
});
