import { execFileSync, spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

/**
 * Plays a video in headless Chromium, as a browser user would, and tells how it went. Chromium runs in a
 * network namespace of its own (`unshare -n`), the page and the video are local files and the test talks to
 * it over a pipe (`--remote-debugging-pipe`): not a packet leaves the machine, whatever the browser tries.
 */

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome'];

/** The browser binary on PATH and a network namespace to run it in, or why a test that needs them must skip. */
export function chromiumOrSkipReason(): { binary: string } | { skip: string } {
  const binary = CANDIDATES.find((name) => {
    try {
      execFileSync('which', [name], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  if (!binary) return { skip: `no Chromium on PATH (${CANDIDATES.join(', ')}): on Debian, apt-get install chromium` };
  try {
    execFileSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
  } catch {
    return { skip: 'cannot create a network namespace (`unshare -n`, root) to keep Chromium off the network' };
  }
  return { binary };
}

export interface Playback {
  /** `ended` when the video played to its end, `error` when the browser refused it. */
  outcome: 'ended' | 'error';
  /** MediaError's code and message on error. */
  error?: string;
  duration: number;
  /** Frames the browser decoded (getVideoPlaybackQuality). */
  frames: number;
  width: number;
  height: number;
}

const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video><script>
const v = document.getElementById('v');
window.playback = new Promise((resolve) => {
  const report = (outcome) => {
    const q = v.getVideoPlaybackQuality();
    resolve({ outcome, error: v.error ? v.error.code + ' ' + v.error.message : undefined, duration: v.duration,
      frames: q.totalVideoFrames, width: v.videoWidth, height: v.videoHeight });
  };
  v.addEventListener('ended', () => report('ended'));
  v.addEventListener('error', () => report('error'));
});
v.src = 'video' + location.hash.slice(1);
v.play().catch(() => {});
</script></body></html>`;

/** Waits for the page's `playback` promise once the page has defined it. */
const AWAIT_PLAYBACK = `new Promise((resolve) => {
  const poll = () => (window.playback ? window.playback.then(resolve) : setTimeout(poll, 50));
  poll();
})`;

/** Plays `file` (its extension names its type) to its end in headless Chromium; rejects after `timeoutMs`. */
export async function playInChromium(binary: string, file: string, timeoutMs = 60_000): Promise<Playback> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-chromium-'));
  const ext = path.extname(file);
  await copyFile(file, path.join(dir, `video${ext}`));
  await writeFile(path.join(dir, 'play.html'), PAGE);
  const child = spawn(
    'unshare',
    [
      '-n',
      binary,
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--autoplay-policy=no-user-gesture-required',
      '--allow-file-access-from-files',
      `--user-data-dir=${path.join(dir, 'profile')}`,
      '--remote-debugging-pipe',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
  );
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let buffered = '';
  fromBrowser.setEncoding('utf8');
  fromBrowser.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\0')) >= 0) {
      const message = JSON.parse(buffered.slice(0, end)) as { id?: number; result?: unknown; error?: unknown };
      buffered = buffered.slice(end + 1);
      const waiter = message.id !== undefined ? pending.get(message.id) : undefined;
      if (!waiter) continue;
      pending.delete(message.id!);
      if (message.error) waiter.reject(new Error(`Chromium: ${JSON.stringify(message.error)}`));
      else waiter.resolve(message.result);
    }
  });
  let nextId = 0;
  const send = <T>(method: string, params: object, sessionId?: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  let timer: NodeJS.Timeout | undefined;
  try {
    const play = async (): Promise<Playback> => {
      const url = `file://${path.join(dir, 'play.html')}#${ext}`;
      const { targetId } = await send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
      // Navigated once attached: what is evaluated next runs in the page, not in the blank one it replaced.
      await send('Page.navigate', { url }, sessionId);
      const evaluated = await send<{ result: { value: Playback } }>(
        'Runtime.evaluate',
        { expression: AWAIT_PLAYBACK, awaitPromise: true, returnByValue: true },
        sessionId,
      );
      return evaluated.result.value;
    };
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`Chromium exited (${code}) before the video played`))),
    );
    // It also exits when closed below, once the race is decided.
    exited.catch(() => {});
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Chromium did not finish playing within ${timeoutMs} ms`)), timeoutMs);
    });
    return await Promise.race([play(), exited, late]);
  } finally {
    clearTimeout(timer);
    // Closed as a user would close it, so that its helper processes end with it; killed if it does not.
    const gone = new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    toBrowser.write(`${JSON.stringify({ id: ++nextId, method: 'Browser.close', params: {} })}\0`);
    await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 5000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}
