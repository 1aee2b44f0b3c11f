import { mkdtemp, readdir } from 'node:fs/promises';
import path from 'node:path';
import { startServeProcess, type ServeProcess } from './serve-process.js';
import { FUGOOD, HELLO_SCRIPT, writeScriptedModel } from './whisper-model.js';

/** The pipelines that ship with mediaflow. */
export const SHIPPED_PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');

/**
 * A real `mediaflow serve` with the shipped pipelines (settings such as the whisper model are the process's, and a
 * recogniser's child runs from dist/), its data directory, and a form POST that answers status and JSON.
 */
export interface Served extends ServeProcess {
  dataDir: string;
  post: (route: string, fields: Record<string, string>) => Promise<{ status: number; body: Record<string, unknown> }>;
  /** The local file behind an output URL. */
  pathOf: (url: string) => string;
}

export async function servePipelines(dataDir: string, env: Record<string, string>): Promise<Served> {
  const started = await startServeProcess(dataDir, { MEDIAFLOW_PIPELINES_DIR: SHIPPED_PIPELINES, ...env });
  return {
    ...started,
    dataDir,
    post: async (route, fields) => {
      const form = new FormData();
      for (const [key, value] of Object.entries(fields)) form.append(key, value);
      const res = await fetch(`${started.base}${route}`, { method: 'POST', body: form });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    pathOf: (url) => path.join(dataDir, 'uploads', decodeURIComponent(url.slice(`${started.base}/uploads/`.length))),
  };
}

/** The files and folders in a data directory's uploads and work folders (or one of them). */
export async function leftovers(dataDir: string, under = '(uploads|work)'): Promise<string[]> {
  const entries = await readdir(dataDir, { recursive: true }).catch(() => []);
  return entries.map(String).filter((entry) => new RegExp(`^${under}/.`).test(entry));
}

/**
 * The two servers a caption pipeline's tests need, with data directories under `dir`: `server`, with the scripted
 * model saying HELLO_SCRIPT at `model` and pinned to @fugood (whose times of it the tests read frames at), where a
 * binding is installed (`missing` unset); and `unavailable`, with no model at all.
 */
export async function captionServers(
  dir: string,
  model: string,
  missing: string | undefined,
): Promise<{ server: Served; unavailable: Served; stop: () => Promise<void> }> {
  const unavailable = await servePipelines(await mkdtemp(path.join(dir, 'data-')), { MEDIAFLOW_WHISPER_MODEL: '' });
  let server: Served | undefined;
  if (!missing) {
    await writeScriptedModel(model, { segments: HELLO_SCRIPT });
    server = await servePipelines(await mkdtemp(path.join(dir, 'data-')), {
      ...FUGOOD,
      MEDIAFLOW_WHISPER_MODEL: model,
    });
  }
  return {
    // Without a binding every case that would use it is skipped.
    server: server!,
    unavailable,
    stop: async () => {
      for (const started of [server, unavailable]) {
        started?.child.kill('SIGTERM');
        await started?.child;
      }
    },
  };
}
