import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ElementHandle, Page } from 'puppeteer-core';
import sharp from 'sharp';
import { mapJson } from '../studio/src/json-map.js';
import { STUDIO_CSP } from '../src/server/studio-route.js';
import { chromiumOrSkipReason } from './helpers/chromium.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { fixture } from './helpers/fixtures.js';
import { getJob, isFinal, waitForJob } from './helpers/jobs.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { assertNearRgb, type Rgb } from './helpers/media.js';
import { launchStudioBrowser, type StudioBrowser } from './helpers/studio-browser.js';

/**
 * The studio page (docs/studio.md) in a real browser against the real server: Debian's headless Chromium, on no
 * network but loopback (helpers/studio-browser.ts). Screenshots at both sizes go to test/artifacts/ for a person.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const BUNDLE = path.join(ROOT, 'dist', 'studio');
const ARTIFACTS = path.join(ROOT, 'test', 'artifacts');
const KEY = 'studio-test-key';
const FRAME_TOLERANCE_PX = 1.5;

/** Two pictures with a fade, a title over them and a tone under them: the clips and times the tests check. */
const TEMPLATE = {
  description: 'Two pictures with a fade, a title and a tone',
  output: { width: 320, height: 240, fps: 25 },
  merge: { TITLE: 'Hello' },
  tracks: [
    {
      clips: [
        { type: 'image', src: '{{PHOTO}}', duration: 2 },
        { type: 'video', src: '{{CLIP}}', transition: { type: 'fade', duration: 0.5 } },
      ],
    },
    { clips: [{ type: 'text', text: '{{TITLE}}', start: 0.5, duration: 1.5 }] },
    { clips: [{ type: 'audio', src: '{{MUSIC}}' }] },
  ],
};

/** The page's text of the document, as the template opens in it. */
const asText = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

/** Builds the page from this source (the bundle alone, as `npm run build` makes it). */
const buildPage = () =>
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.js'), '--studio'], { cwd: ROOT });

describe('the studio page: its files and headers', () => {
  let server: TestServer;
  before(async () => {
    buildPage();
    server = await startMediaflow();
  });
  after(() => server?.close());

  it('is served at /studio/ with a CSP of its own origin only, nosniff, and no inline script or style', async () => {
    const page = await fetch(`${server.base}/studio/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.equal(page.headers.get('content-security-policy'), STUDIO_CSP);
    assert.match(STUDIO_CSP, /default-src 'self'/);
    assert.doesNotMatch(STUDIO_CSP, /unsafe-inline|unsafe-eval|nonce-|https?:|\*/);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    const html = await page.text();
    // Every script has a src of its own, no element carries a style or an on... attribute, no <style>.
    for (const script of html.match(/<script\b[^>]*>/g) ?? []) assert.match(script, /\bsrc="studio\.js"/);
    assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
    for (const [file, type] of [
      ['studio.js', /^text\/javascript/],
      ['studio.css', /^text\/css/],
    ] as const) {
      const asset = await fetch(`${server.base}/studio/${file}`);
      assert.equal(asset.status, 200, file);
      assert.match(asset.headers.get('content-type')!, type);
      assert.equal(asset.headers.get('x-content-type-options'), 'nosniff');
    }
    // Nothing else is served from there, and /studio becomes /studio/ (the page's links are relative).
    assert.equal((await fetch(`${server.base}/studio/package.json`)).status, 404);
    assert.equal((await fetch(`${server.base}/studio/..%2Fpackage.json`)).status, 404);
    const bare = await fetch(`${server.base}/studio`, { redirect: 'manual' });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get('location'), 'studio/');
  });

  it('is at most 400 KB gzipped, all its files together', async () => {
    let total = 0;
    for (const file of await readdir(BUNDLE))
      total += gzipSync(await readFile(path.join(BUNDLE, file)), { level: 9 }).length;
    assert.ok(total <= 400 * 1024, `dist/studio/ is ${total} bytes gzipped`);
    assert.ok(total > 10 * 1024, `dist/studio/ holds the editor (${total} bytes gzipped)`);
  });

  it('says how to build it where it is not built (a production install); MEDIAFLOW_STUDIO=0 turns it off', async () => {
    const away = `${BUNDLE}.away`;
    await rename(BUNDLE, away);
    try {
      const missing = await fetch(`${server.base}/studio/`);
      assert.equal(missing.status, 503);
      assert.equal(missing.headers.get('content-security-policy'), STUDIO_CSP);
      const text = await missing.text();
      assert.match(text, /not built/);
      assert.match(text, /npm ci/);
      assert.doesNotMatch(text, /<script/);
    } finally {
      await rename(away, BUNDLE);
    }
    const off = await startMediaflow({ MEDIAFLOW_STUDIO: '0' });
    try {
      assert.equal((await fetch(`${off.base}/studio/`)).status, 404);
      assert.equal((await fetch(`${off.base}/studio/studio.js`)).status, 404);
    } finally {
      await off.close();
    }
  });
});

describe('the studio page in a browser', () => {
  const chromium = chromiumOrSkipReason();
  let server: TestServer;
  let files: FileServer;
  let studio: StudioBrowser;
  let page: Page;
  let templates: string;
  const violations: string[] = [];
  const pageErrors: string[] = [];
  const skipWithout = (context: unknown) => {
    if ('skip' in chromium) (context as { skip?: (why: string) => void }).skip?.(chromium.skip);
    return 'skip' in chromium;
  };

  before(async () => {
    if ('skip' in chromium) return;
    buildPage();
    await mkdir(ARTIFACTS, { recursive: true });
    templates = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-studio-templates-'));
    await writeFile(path.join(templates, 'studio-test.json'), JSON.stringify(TEMPLATE));
    // A download that never ends: a job fetching it holds the only slot until it is cancelled.
    files = await startFileServer({
      '/stalls.jpg': (_req, res) => void res.writeHead(200, { 'content-type': 'image/jpeg' }),
    });
    server = await startMediaflow({
      MEDIAFLOW_API_KEY: KEY,
      MEDIAFLOW_TEMPLATES: templates,
      MEDIAFLOW_CONCURRENCY: '1',
    });
    studio = await launchStudioBrowser(chromium.binary, Number(new URL(server.base).port));
    page = await studio.browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (event) =>
        console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
      );
    });
    page.on('console', (message) => {
      if (message.text().startsWith('CSP violation')) violations.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(String(error)));
  });

  after(async () => {
    await studio?.close();
    await server?.close();
    await files?.close();
    if (templates) await rm(templates, { recursive: true, force: true });
  });

  /** Waits until `predicate` (run in the page) holds. */
  const until = (predicate: string, timeout = 20_000) => page.waitForFunction(predicate, { timeout, polling: 50 });
  const text = (selector: string) => page.$eval(selector, (element) => element.textContent ?? '');
  const bar = (track: number, index: number) => `.clip[data-track="${track}"][data-index="${index}"]`;

  /** Replaces the editor's whole text, as a paste would. */
  async function typeDocument(document: unknown): Promise<void> {
    await page.click('#editor >>> .cm-content');
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.sendCharacter(asText(document));
  }

  it('asks for the API key, refuses a wrong one, and keeps the right one for the tab', async (context) => {
    if (skipWithout(context)) return;
    const response = await page.goto(`${server.base}/studio/`);
    assert.equal(response!.status(), 200);
    assert.equal(response!.headers()['content-security-policy'], STUDIO_CSP);
    await until(`!document.querySelector('#key-form').hidden`);
    assert.match(await text('#key-message'), /needs an API key/);
    await page.type('#key-input', 'not-the-key');
    await page.click('#key-form button[type=submit]');
    await until(`/refused/.test(document.querySelector('#key-message').textContent)`);
    assert.equal(await page.$eval('#key-form', (form) => (form as HTMLFormElement).hidden), false);
    await page.type('#key-input', KEY);
    await page.click('#key-form button[type=submit]');
    await until(`[...document.querySelectorAll('#template option')].some((o) => o.value === 'studio-test')`);
    assert.equal(await page.$eval('#key-form', (form) => (form as HTMLFormElement).hidden), true);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('mediaflow.apiKey')), KEY);
  });

  let media: Record<string, string>;
  let timeline: { duration: number; clips: Array<{ track: number; index: number; start: number; end: number }> };

  it('opens a template and draws its clips at their times, with the fade over both pictures', async (context) => {
    if (skipWithout(context)) return;
    await page.select('#template', 'studio-test');
    await page.click('#open-template');
    await until(`document.querySelector('#merge-fields input[name=PHOTO]')`);
    media = {
      PHOTO: files.url('/f/red-640x360.jpg'),
      CLIP: files.url('/f/clip-2s-640x360-25fps.mp4'),
      MUSIC: files.url('/f/tone-3s-44k-stereo.mp3'),
    };
    await Promise.all(Object.values(media).map((url) => fixture(decodeURIComponent(url.split('/f/')[1]!))));
    for (const [name, url] of Object.entries(media)) await page.type(`#merge-fields input[name=${name}]`, url);
    await until(`document.querySelectorAll('#timeline .clip').length === 4`, 30_000);
    // The server's own dry run of the same document: the times the bars must be drawn at.
    const dry = await fetch(`${server.base}/render/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ template: 'studio-test', merge: media, dry_run: true }),
    });
    timeline = ((await dry.json()) as { timeline: typeof timeline }).timeline;
    const at = (track: number, index: number) => timeline.clips.find((c) => c.track === track && c.index === index)!;
    // The document's own times, and what the media made of the auto ones.
    assert.deepEqual([at(0, 0).start, at(0, 0).end, at(0, 1).start, at(1, 0).start, at(1, 0).end], [0, 2, 1.5, 0.5, 2]);
    assert.equal(timeline.duration, at(0, 1).end);
    for (const clip of timeline.clips) {
      const place = await page.$eval(bar(clip.track, clip.index), (element) => {
        const lane = element.parentElement!.getBoundingClientRect();
        const box = element.getBoundingClientRect();
        return { left: box.left - lane.left, right: box.right - lane.left, width: lane.width };
      });
      const px = (seconds: number) => (seconds / timeline.duration) * place.width;
      assert.ok(
        Math.abs(place.left - px(clip.start)) <= FRAME_TOLERANCE_PX,
        `${JSON.stringify(clip)} starts at ${place.left}px`,
      );
      assert.ok(
        Math.abs(place.right - px(clip.end)) <= FRAME_TOLERANCE_PX,
        `${JSON.stringify(clip)} ends at ${place.right}px`,
      );
    }
    const fade = await page.$eval('.track:first-child .overlap', (element) => {
      const lane = element.parentElement!.getBoundingClientRect();
      const box = element.getBoundingClientRect();
      return { left: box.left - lane.left, width: box.width, lane: lane.width, text: element.textContent };
    });
    assert.equal(fade.text, 'fade');
    assert.ok(Math.abs(fade.left - (1.5 / timeline.duration) * fade.lane) <= FRAME_TOLERANCE_PX, JSON.stringify(fade));
    assert.ok(Math.abs(fade.width - (0.5 / timeline.duration) * fade.lane) <= FRAME_TOLERANCE_PX, JSON.stringify(fade));
    // The text equivalent: the same clips, with their times, in a table.
    const rows = await page.$$eval('.clip-table tbody tr', (trs) => trs.map((tr) => tr.textContent));
    assert.equal(rows.length, 4);
    assert.match(rows[1]!, /video \(fade 0\.5 s\)1\.5 s/);
    assert.match(
      await page.$eval(bar(0, 1), (b) => b.getAttribute('aria-label')!),
      /Track 1, clip 2: video, 1\.5 s to/,
    );
  });

  it("shows each clip's frame from the dry run's storyboard on its bar", async (context) => {
    if (skipWithout(context)) return;
    const asked = await fetch(`${server.base}/render/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ template: 'studio-test', merge: media, dry_run: true, storyboard: true }),
    });
    assert.equal(asked.status, 200);
    // Each picture's bar shows its own frame: the red picture red, the title's black background dark.
    await until(`document.querySelectorAll('#timeline .thumb').length === 3`, 30_000);
    /** The colour a bar's picture shows at a point, given as shares of its width and height. */
    const shown = async (selector: string, across: number, down: number): Promise<Rgb> => {
      // Read from a file: the server in this process lets libvips load files only (src/engine/exec/libvips.ts).
      const shot = path.join(ARTIFACTS, `studio-thumb-${selector.replace(/\W+/g, '-')}.png`);
      await (await page.$(`${selector} .thumb`))!.screenshot({ path: shot as `${string}.png` });
      const { data, info } = await sharp(shot).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const at = (Math.floor(info.height * down) * info.width + Math.floor(info.width * across)) * 3;
      return [data[at]!, data[at + 1]!, data[at + 2]!];
    };
    assertNearRgb(await shown(bar(0, 0), 0.5, 0.5), [255, 0, 0], 40, 'the red picture');
    assertNearRgb(await shown(bar(1, 0), 0.1, 0.1), [0, 0, 0], 40, "the title's background");
    assert.equal(await page.$(`${bar(2, 0)} .thumb`), null, 'a sound has no frame');
  });

  it('is usable at 1280x800 and at 390x844 (screenshots in test/artifacts/)', async (context) => {
    if (skipWithout(context)) return;
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewport({ width, height });
      await until(`document.querySelectorAll('#timeline .clip').length === 4`);
      // Nothing wider than the screen: no sideways scrolling of the page.
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= width, `${width}px wide`);
      for (const selector of ['#editor', '#timeline .clip', '#render-button', '#operation'])
        assert.ok(await page.$eval(selector, (e) => e.getBoundingClientRect().width > 0), `${selector} at ${width}px`);
      await page.screenshot({
        path: path.join(ARTIFACTS, `studio-${width}x${height}.png`) as `${string}.png`,
        fullPage: true,
      });
    }
    await page.setViewport({ width: 1280, height: 800 });
  });

  it('takes the keyboard through every part, in reading order, and out of the editor again', async (context) => {
    if (skipWithout(context)) return;
    // From the first control of the page, what each Tab reaches: named by its field, its id or its class.
    await page.focus('#template');
    const reached = ['template'];
    for (let step = 0; step < 20; step++) {
      await page.keyboard.press('Tab');
      reached.push(
        await page.evaluate(() => {
          const at = document.activeElement as HTMLElement;
          if (at.closest('#editor')) return 'editor';
          if (at.classList.contains('clip')) return `clip ${at.dataset.track}:${at.dataset.index}`;
          return at.getAttribute('name') || at.id || at.className || at.tagName;
        }),
      );
    }
    const order = ['template', 'open-template', 'editor', 'PHOTO', 'clip 0:0', 'render-button', 'refresh-jobs'];
    const at = order.map((name) => reached.indexOf(name));
    assert.ok(
      at.every((index, i) => index >= 0 && (i === 0 || index > at[i - 1]!)),
      `reached in order: ${reached.join(', ')}`,
    );
    // One Tab from the editor leaves it (Tab does not indent there), and every bar is reached, each once.
    assert.notEqual(reached[reached.indexOf('editor') + 1], 'editor');
    assert.deepEqual(
      reached.filter((name) => name.startsWith('clip ')),
      ['clip 0:0', 'clip 0:1', 'clip 1:0', 'clip 2:0'],
    );
  });

  it("selects a clip's text when its bar is pressed, and its bar when the cursor is in its text", async (context) => {
    if (skipWithout(context)) return;
    const source = asText(TEMPLATE);
    const spans = mapJson(source).spans;
    const lines = (path: string) => {
      const span = spans.get(path)!;
      return [span.from, span.to].map((pos) => source.slice(0, pos).split('\n').length);
    };
    const [first, last] = lines('tracks[0].clips[1]');
    await page.click(bar(0, 1));
    await until(`document.querySelector('#selection').textContent.includes('track 1, clip 2')`);
    assert.equal(await text('#selection'), `Selected: track 1, clip 2 (lines ${first} to ${last})`);
    assert.equal(await page.$eval(bar(0, 1), (b) => b.getAttribute('aria-pressed')), 'true');
    // With the keyboard: a bar is a button, Enter presses it, and the focus stays on it.
    await page.focus(bar(2, 0));
    await page.keyboard.press('Enter');
    await until(`document.querySelector('#selection').textContent.includes('track 3, clip 1')`);
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.track), '2');
    // The other way: the cursor on the title's line in the document presses the title's bar.
    const [titleLine] = lines('tracks[1].clips[0].text');
    await page.click('#editor >>> .cm-content');
    await page.keyboard.down('Control');
    await page.keyboard.press('Home');
    await page.keyboard.up('Control');
    for (let line = 1; line < titleLine!; line++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    await until(`document.querySelector('${bar(1, 0)}').getAttribute('aria-pressed') === 'true'`);
    assert.equal(await page.$eval(bar(0, 1), (b) => b.getAttribute('aria-pressed')), 'false');
  });

  it("marks a broken field on its clip: the page's check as it is typed, then the dry run's", async (context) => {
    if (skipWithout(context)) return;
    // Only the server knows the video lasts 2 s: a trim of 30 s is its dry run's problem.
    const trimmed = structuredClone(TEMPLATE);
    Object.assign(trimmed.tracks[0]!.clips[1]!, { trim: 30 });
    await typeDocument(trimmed);
    await until(`document.querySelector('${bar(0, 1)}.has-problem')`, 30_000);
    assert.match(
      await page.$eval(bar(0, 1), (b) => b.getAttribute('aria-label')!),
      /tracks\[0\]\.clips\[1\]\.trim: is 30/,
    );
    assert.match(await text('#problems'), /tracks\[0\]\.clips\[1\]\.trim: is 30 s, past the end of the media/);
    assert.equal(await page.$(`${bar(0, 0)}.has-problem`), null);
    assert.ok(await page.$('#timeline .stale'), 'the timeline is marked as the last one that resolved');
    // A time that is no time: the schema's, told before any request, and underlined in the editor. Markup in it
    // is shown as the text it is, never made into elements.
    const untimed = structuredClone(TEMPLATE);
    Object.assign(untimed.tracks[1]!.clips[0]!, { duration: '<b>soon</b>' });
    await typeDocument(untimed);
    await until(`document.querySelector('${bar(1, 0)}.has-problem')`);
    assert.match(await text('#problems'), /tracks\[1\]\.clips\[0\]\.duration: expected a time.*got '<b>soon<\/b>'/);
    assert.equal(await page.$('#problems b, #timeline b'), null);
    const underlined = await page.$eval('#editor >>> .cm-lintRange-error', (range) => range.textContent);
    assert.equal(underlined, '"<b>soon</b>"');
    assert.equal(await page.$eval('#render-button', (b) => (b as HTMLButtonElement).disabled), true);
    // Mended, the bars are clear again.
    await typeDocument(TEMPLATE);
    await until(
      `document.querySelectorAll('#timeline .has-problem').length === 0 && !document.querySelector('#timeline .stale')`,
    );
  });

  /** Records each value the job panel's progress bar takes. */
  const watchProgress = () =>
    page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { progressSeen: number[] }).progressSeen = seen;
      const job = document.querySelector('#job')!;
      new MutationObserver(() => {
        const bar = job.querySelector('progress');
        if (bar && seen.at(-1) !== bar.value) seen.push(bar.value);
      }).observe(job, { subtree: true, childList: true, attributes: true });
    });
  const progressSeen = () => page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);

  /** Plays the job panel's video, muted, to its end; answers its duration. */
  const playToEnd = (): Promise<number> =>
    page.$eval('#job video', async (element) => {
      const video = element as HTMLVideoElement;
      video.muted = true;
      const ended = new Promise<void>((resolve, reject) => {
        video.addEventListener('ended', () => resolve());
        video.addEventListener('error', () => reject(new Error(`video error ${video.error?.code}`)));
      });
      await video.play();
      await ended;
      return video.duration;
    });

  const assertRose = (seen: number[]) => {
    assert.ok(seen.length >= 3, `progress seen: ${seen.join(', ')}`);
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      seen,
      `progress never goes down: ${seen.join(', ')}`,
    );
    assert.ok(
      seen.some((value) => value > 0 && value < 100),
      `progress between 0 and 100: ${seen.join(', ')}`,
    );
    assert.equal(seen.at(-1), 100);
  };

  it('runs an operation with a file dropped on its URL field, follows it and plays the result', async (context) => {
    if (skipWithout(context)) return;
    await page.select('#operation', 'images-to-video');
    const field = (await page.waitForSelector('#operation-form textarea[name=image_urls]'))!;
    const picture = await fixture('red-640x360.jpg');
    await dropFile(page, field, picture);
    await until(`/\\/uploads\\//.test(document.querySelector('#operation-form textarea[name=image_urls]').value)`);
    assert.match(await text('#operation-form .upload-status'), /Uploaded: 1 file/);
    await page.type('#operation-form input[name=seconds_per_image]', '2');
    await watchProgress();
    await page.click('#operation-form button[type=submit]');
    await until(`document.querySelector('#job video')`, 60_000);
    assertRose(await progressSeen());
    assert.match(await text('#job .stage'), /^succeeded/);
    const duration = await playToEnd();
    assert.ok(Math.abs(duration - 2) < 0.1, `the video lasts ${duration} s`);
    assert.match(
      await page.$eval('#job a.download', (a) => a.getAttribute('href')!),
      /^http:\/\/127\.0\.0\.1:\d+\/uploads\//,
    );
  });

  it('renders the edit as a job, follows its progress, and plays the video to its end', async (context) => {
    if (skipWithout(context)) return;
    await watchProgress();
    await page.click('#render-button');
    // The panel follows the new job (not the operation's before it) to its end.
    await until(`/^render /.test(document.querySelector('#job h3')?.textContent ?? '')`);
    await until(
      `/^(succeeded|failed|cancelled)/.test(document.querySelector('#job .stage')?.textContent ?? '')`,
      120_000,
    );
    const id = await text('#job h3 code');
    const job = await getJob(server.base, id, { 'x-api-key': KEY });
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    await until(`document.querySelector('#job video')`);
    assertRose(await progressSeen());
    const duration = await playToEnd();
    assert.ok(
      Math.abs(duration - timeline.duration) < 0.1,
      `the render lasts ${duration} s, its timeline ${timeline.duration} s`,
    );
  });

  it('cancels a render with its Cancel button', async (context) => {
    if (skipWithout(context)) return;
    // The only slot is taken by a job whose download never ends: the render waits in the queue.
    const blocker = await fetch(`${server.base}/images-to-video/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY, prefer: 'respond-async' },
      body: JSON.stringify({ image_urls: [files.url('/stalls.jpg')] }),
    });
    const blockerId = ((await blocker.json()) as { job_id: string }).job_id;
    await waitForJob(server.base, blockerId, (job) => job.status === 'running', { headers: { 'x-api-key': KEY } });
    const followed = await text('#job h3 code');
    await page.click('#render-button');
    await until(`document.querySelector('#job h3 code')?.textContent !== '${followed}'`);
    await until(`/^queued/.test(document.querySelector('#job .stage')?.textContent ?? '')`);
    const id = await text('#job h3 code');
    await page.click('#job button.cancel');
    await until(`/^cancelled/.test(document.querySelector('#job .stage').textContent)`);
    assert.equal((await getJob(server.base, id, { 'x-api-key': KEY })).status, 'cancelled');
    assert.equal(await page.$eval('#job button.cancel', (b) => (b as HTMLButtonElement).disabled), true);
    await fetch(`${server.base}/jobs/${blockerId}`, { method: 'DELETE', headers: { 'x-api-key': KEY } });
    await waitForJob(server.base, blockerId, isFinal, { headers: { 'x-api-key': KEY } });
  });

  it("lists the key's jobs, newest first, with their status, progress and age", async (context) => {
    if (skipWithout(context)) return;
    const listed = await fetch(`${server.base}/jobs/`, { headers: { 'x-api-key': KEY } });
    const { jobs } = (await listed.json()) as { jobs: Array<{ job_id: string; name: string; status: string }> };
    await page.click('#refresh-jobs');
    // The page's rows are the API's, in its order and with its statuses, once the refresh has come back.
    const shown = (list: Array<{ id?: string; status?: string | null }>) => JSON.stringify(list);
    const expected = shown(jobs.map((job) => ({ id: job.job_id, status: job.status })));
    await until(
      `JSON.stringify([...document.querySelectorAll('.job-table tbody tr')].map((tr) => ` +
        `({ id: tr.dataset.job, status: tr.cells[1].textContent }))) === ${JSON.stringify(expected)}`,
    );
    const rows = await page.$$eval('.job-table tbody tr', (trs) =>
      trs.map((tr) => ({ id: (tr as HTMLElement).dataset.job, cells: [...tr.cells].map((td) => td.textContent) })),
    );
    assert.deepEqual(
      rows.map((row) => row.id),
      jobs.map((job) => job.job_id),
    );
    // The render cancelled last, then the job that held the slot meanwhile, cancelled too.
    assert.deepEqual(rows[0]!.cells.slice(0, 2), ['render', 'cancelled']);
    assert.deepEqual(rows[1]!.cells.slice(0, 2), ['images-to-video', 'cancelled']);
    assert.ok(
      rows.some(
        (row) => row.cells[0] === 'images-to-video' && row.cells[1] === 'succeeded' && /100%/.test(row.cells[2]!),
      ),
    );
    assert.match(rows[0]!.cells[3]!, /s ago$/);
  });

  it('broke no rule of its Content-Security-Policy and threw no error', async (context) => {
    if (skipWithout(context)) return;
    assert.deepEqual(violations, []);
    assert.deepEqual(pageErrors, []);
  });
});

/** Drops a file on an element as a user would: a drag from outside the page, with the file, ending in a drop. */
async function dropFile(page: Page, target: ElementHandle, file: string): Promise<void> {
  await target.scrollIntoView();
  const box = (await target.boundingBox())!;
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  const session = await page.createCDPSession();
  const data = { items: [], files: [file], dragOperationsMask: 1 };
  for (const type of ['dragEnter', 'dragOver', 'drop'] as const)
    await session.send('Input.dispatchDragEvent', { type, x, y, data });
  await session.detach();
}
