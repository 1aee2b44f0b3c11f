import { ApiError, call, callJson, isFinal, isOwnOutput, type Job } from './api.js';
import { el, replace } from './dom.js';
import { EventStreamParser } from './sse.js';

/**
 * Jobs as the page shows them: the job followed now (its progress from its event stream, a cancel button, then what
 * it made, played in the page when it is this server's), and the list of the key's jobs.
 */

const VIDEO = /\.(mp4|webm|mov|m4v|mkv)$/i;
const AUDIO = /\.(mp3|m4a|aac|wav|ogg|opus|flac)$/i;
const IMAGE = /\.(jpe?g|png|webp|gif)$/i;

/** Reads a job's events until it ends (or `signal` aborts), telling `seen` of each state. */
async function follow(id: string, seen: (job: Job) => void, signal: AbortSignal): Promise<void> {
  for (;;) {
    const response = await call(`jobs/${encodeURIComponent(id)}/events`, { signal });
    const parser = new EventStreamParser();
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let last: Job | undefined;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const data of parser.push(value)) {
        last = JSON.parse(data) as Job;
        seen(last);
      }
    }
    if (last && isFinal(last)) return;
    // The stream was cut before the end (a proxy, a restart): read on after a moment.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (signal.aborted) return;
  }
}

/** A result's media, as the page shows it: played here when it is this server's own, else a link. */
function mediaOf(url: string, label: string): HTMLElement {
  const file = new URL(url).pathname;
  const download = el('a', { attrs: { href: url, download: '', class: 'download' } }, `Download ${label}`);
  if (!isOwnOutput(url))
    return el('p', {}, el('a', { attrs: { href: url, rel: 'noopener noreferrer' } }, `${label}: ${url}`));
  const player = VIDEO.test(file)
    ? el('video', { attrs: { controls: '', preload: 'metadata', playsinline: '', src: url } })
    : AUDIO.test(file)
      ? el('audio', { attrs: { controls: '', preload: 'metadata', src: url } })
      : IMAGE.test(file)
        ? el('img', { attrs: { src: url, alt: `${label} (the result)` } })
        : null;
  return el('figure', { class: 'result-media' }, player, el('figcaption', {}, download));
}

/** Every URL a result holds, with its field: `output_file`, `output_files[0]`, a pipeline's `outputs.x`. */
function urlsOf(value: unknown, path: string): Array<[string, string]> {
  if (typeof value === 'string') return /^https?:\/\//.test(value) ? [[path, value]] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => urlsOf(item, `${path}[${index}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([name, item]) => urlsOf(item, path ? `${path}.${name}` : name));
  return [];
}

const age = (iso: string): string => {
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  return s < 60
    ? `${Math.round(s)} s ago`
    : s < 3600
      ? `${Math.round(s / 60)} min ago`
      : `${Math.round(s / 3600)} h ago`;
};

/** The job followed now. */
export class JobPanel {
  private following?: AbortController;
  private view?: { progress: HTMLProgressElement; stage: HTMLElement; cancel: HTMLButtonElement; outcome: HTMLElement };

  constructor(
    private readonly section: HTMLElement,
    /** Told at each change of state, so the list can show it. */
    private readonly changed: (job: Job) => void,
  ) {}

  /** Follows job `id`; `what` names it ("render", an operation's name). */
  follow(id: string, what: string): void {
    this.following?.abort();
    const following = new AbortController();
    this.following = following;
    const progress = el('progress', { attrs: { max: '100', value: '0', 'aria-label': `Progress of ${what}` } });
    const stage = el('span', { class: 'stage', attrs: { role: 'status' } }, 'submitted');
    const cancel = el(
      'button',
      {
        attrs: { type: 'button', class: 'cancel' },
        on: {
          click: () => {
            cancel.disabled = true;
            call(`jobs/${encodeURIComponent(id)}`, { method: 'DELETE' })
              .then(async (response) => this.show((await response.json()) as Job))
              .catch((error: Error) => (outcome.textContent = `Not cancelled: ${error.message}`));
          },
        },
      },
      'Cancel',
    );
    const outcome = el('div', { class: 'outcome', attrs: { 'aria-live': 'polite' } });
    const heading = el('h3', {}, `${what} `, el('code', {}, id));
    replace(this.section, heading, el('div', { class: 'progress-line' }, progress, stage, cancel), outcome);
    this.view = { progress, stage, cancel, outcome };
    follow(id, (job) => following === this.following && this.show(job), following.signal).catch((error: Error) => {
      if (!following.signal.aborted) outcome.textContent = `Cannot follow the job: ${error.message}`;
    });
  }

  private show(job: Job): void {
    const view = this.view;
    if (!view) return;
    // Progress never goes down (docs/jobs.md); an answer to DELETE may come after a later event.
    view.progress.value = Math.max(view.progress.value, job.progress);
    view.progress.setAttribute('aria-valuetext', `${job.progress}%: ${job.stage}`);
    view.stage.textContent = `${job.status}: ${job.stage} (${job.progress}%)`;
    view.cancel.disabled = isFinal(job);
    this.changed(job);
    if (!isFinal(job) || view.outcome.dataset.status === job.status) return;
    view.outcome.dataset.status = job.status;
    if (job.status === 'succeeded' && job.result) {
      const urls = urlsOf(job.result, '');
      const answers = Object.entries(job.result).filter(([, value]) => urlsOf(value, '').length === 0);
      replace(
        view.outcome,
        ...urls.map(([field, url]) => mediaOf(url, field)),
        answers.length > 0
          ? el('pre', { class: 'answers' }, JSON.stringify(Object.fromEntries(answers), null, 2))
          : null,
      );
    } else if (job.error) {
      replace(view.outcome, el('p', { class: 'error' }, `${job.error.status}: ${job.error.error}`));
    } else replace(view.outcome, el('p', {}, `The job was ${job.status}.`));
  }
}

/** The jobs this tab started, for a server that lists none (it has no API key). */
const TAB_JOBS = 'mediaflow.tabJobs';

/** The key's jobs, newest first, a page at a time; without a key on the server, the jobs of this tab. */
export class JobList {
  private next: string | null = null;
  private jobs = new Map<string, Job>();
  private note = '';

  constructor(
    private readonly section: HTMLElement,
    private readonly open: (job: Job) => void,
  ) {}

  /** Remembers a job this tab started (the list without a key on the server). */
  started(id: string): void {
    const ids = this.tabJobs().filter((known) => known !== id);
    sessionStorage.setItem(TAB_JOBS, JSON.stringify([id, ...ids].slice(0, 50)));
  }

  private tabJobs(): string[] {
    try {
      const ids = JSON.parse(sessionStorage.getItem(TAB_JOBS) ?? '[]') as unknown;
      return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
    } catch {
      return [];
    }
  }

  /** A job's new state, shown in its row when it is listed. */
  update(job: Job): void {
    // A job not listed yet (the list was read before it): read again once it has ended, not at each event.
    if (!this.jobs.has(job.job_id)) return void (isFinal(job) && this.refresh().catch(() => {}));
    this.jobs.set(job.job_id, job);
    this.draw();
  }

  /** Reads the first page again. */
  async refresh(): Promise<void> {
    this.jobs.clear();
    this.next = null;
    await this.more();
  }

  /** Reads the next page. */
  async more(): Promise<void> {
    let note = '';
    try {
      const page = await callJson<{ jobs: Job[]; next: string | null }>(
        `jobs/?limit=20${this.next ? `&before=${encodeURIComponent(this.next)}` : ''}`,
      );
      for (const job of page.jobs) this.jobs.set(job.job_id, job);
      this.next = page.next;
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'MF_ERR_UNAVAILABLE') throw error;
      // No key on the server: it lists nothing, so the list is the jobs this tab started that are still there.
      note = 'This server has no API key, so it lists no jobs: these are the jobs this tab started.';
      const found = await Promise.all(
        this.tabJobs().map((id) => callJson<Job>(`jobs/${encodeURIComponent(id)}`).catch(() => undefined)),
      );
      for (const job of found) if (job) this.jobs.set(job.job_id, job);
    }
    this.draw(note);
  }

  private draw(note = this.note): void {
    this.note = note;
    const rows = [...this.jobs.values()].sort((a, b) => b.created_at.localeCompare(a.created_at));
    const table = el(
      'table',
      { class: 'job-table' },
      el('caption', {}, `Jobs: ${rows.length}${this.next ? ' (more below)' : ''}`),
      el(
        'thead',
        {},
        el('tr', {}, ...['Job', 'Status', 'Progress', 'Age', ''].map((h) => el('th', { attrs: { scope: 'col' } }, h))),
      ),
      el(
        'tbody',
        {},
        ...rows.map((job) =>
          el(
            'tr',
            { attrs: { 'data-job': job.job_id } },
            el('td', {}, job.name),
            el('td', { class: `status-${job.status}` }, job.status),
            el(
              'td',
              {},
              el('progress', {
                attrs: { max: '100', value: String(job.progress), 'aria-label': `${job.name}: ${job.progress}%` },
              }),
              ` ${job.progress}%`,
            ),
            el('td', {}, el('time', { attrs: { datetime: job.created_at } }, age(job.created_at))),
            el('td', {}, el('button', { attrs: { type: 'button' }, on: { click: () => this.open(job) } }, 'Open')),
          ),
        ),
      ),
    );
    replace(
      this.section,
      note ? el('p', { class: 'note' }, note) : null,
      table,
      this.next
        ? el(
            'button',
            { attrs: { type: 'button' }, on: { click: () => void this.more().catch(() => {}) } },
            'More jobs',
          )
        : null,
    );
  }
}
