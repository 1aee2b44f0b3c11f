import { createHash, randomUUID } from 'node:crypto';
import type { Config } from '../engine/config.js';
import { busyError, diskFullError, isAbort, jobErrorOf, MediaflowError, type JobError } from '../engine/errors.js';
import type { Logger } from '../engine/logger.js';
import { checkNesting } from '../engine/nesting.js';
import { WebhookDeliveries, type DeliveryOutcome } from './webhooks/deliveries.js';
import type { JobBackend } from './backend.js';
import type { JobEvents } from './events.js';
import {
  idempotencyIndex,
  isTerminal,
  jobView,
  resultBody,
  resultPaths,
  type JobKind,
  type JobRecord,
  type JobStatus,
  type JobView,
  type StoredResult,
} from './job.js';
import { RecordTooLargeError, type JobStore } from './job-store.js';
import type { JobQueue } from './queue.js';
import { untilReachable } from './retry.js';
import type { ProgressReport } from './handler.js';
import { checkJob, runJob, type RunnerDeps } from './runner.js';

/** A request to run an operation or a pipeline as a job. */
export interface Submission {
  kind: JobKind;
  name: string;
  fields: Record<string, unknown>;
  baseUrl: string;
  ownBases: string[];
  mode: 'sync' | 'async';
  metadata?: unknown;
  webhookUrl?: string;
  idempotencyKey?: string;
  /**
   * What an idempotent replay is compared by in place of `fields`, when they name something new at
   * every request: files uploaded with the request, each a new URL, compared by their content.
   */
  fingerprintFields?: Record<string, unknown>;
  /** The submitting API key's hash, when several keys are configured (auth.ts keyOwner). */
  owner?: string;
}

/** Hears what jobs do, for metrics. */
export interface JobObserver {
  /** A job started, after waiting this long in the queue. */
  started(waitSeconds: number): void;
  delivery(outcome: DeliveryOutcome): void;
}

/**
 * What the service is built with: the handler of each kind of job and the output store (RunnerDeps),
 * its settings, where jobs live, and who hears about them. The store turns result paths into URLs
 * and removes expired outputs; nothing is reached through the engine.
 */
export interface JobServiceDeps extends RunnerDeps {
  config: Config;
  backend: JobBackend;
  logger: Logger;
  observer?: JobObserver;
}

/** How long a cancel waits for another process to stop the job before it answers. */
const CANCEL_WAIT_MS = 30_000;

/** Progress events at most this often; state changes go out at once. */
const PROGRESS_EVERY_MS = 500;

/** The reason a job is stopped when its process shuts down: it goes back to the queue, not to `cancelled`. */
const SHUTDOWN = new DOMException('The server is shutting down', 'AbortError');
const CANCELLED = new DOMException('Job cancelled', 'AbortError');

/** The idempotency fingerprint: what a replay must repeat exactly. */
function fingerprint(submission: Submission): string {
  // `canonical` recurses: the nesting limit bounds it, whoever submits (HTTP, CLI, SDK).
  checkNesting(submission.fingerprintFields ?? submission.fields);
  checkNesting(submission.metadata);
  const canonical = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
        )
      : Array.isArray(value)
        ? value.map(canonical)
        : value;
  const { kind, name, metadata, webhookUrl } = submission;
  const fields = submission.fingerprintFields ?? submission.fields;
  return createHash('sha256')
    .update(
      JSON.stringify(canonical({ kind, name, fields, metadata: metadata ?? null, webhookUrl: webhookUrl ?? null })),
    )
    .digest('hex');
}

/** How a job ended: its outputs, or why it failed. */
type Ending = { result?: StoredResult; error?: { status: number; error: string }; timings?: Record<string, unknown> };

/**
 * A stage as a run shows it: a run after an interrupted one names its attempt (`download (attempt 2 of 2)`),
 * so a client whose job sits at the progress of the run before knows that it is running again.
 */
const attemptStage = (stage: string, attempt: number, limit: number): string =>
  attempt > 1 ? `${stage} (attempt ${attempt} of ${limit})` : stage;

/** Why a job that kept being interrupted is given up. */
const interruptedMessage = (attempts: number, limit: number) =>
  `The job was interrupted ${attempts} time${attempts === 1 ? '' : 's'} (its server, worker or Redis stopped ` +
  `while it ran) and is not tried again (MEDIAFLOW_JOB_ATTEMPTS is ${limit})`;

/** The failure of a synchronous job stopped by a graceful shutdown: its client may send it again. */
const SHUTTING_DOWN = jobErrorOf(busyError('The server is shutting down; retry later'));

/** A failure as the job keeps it: the synchronous status and text. Unexpected errors are logged, not shown. */
function errorBody(thrown: unknown, logger: Logger, id: string): JobError {
  // A full disk wherever it struck (a download, a work file, publishing) is a 507, not a 500.
  const found = diskFullError(thrown) ?? thrown;
  const error =
    found instanceof MediaflowError ? found : new MediaflowError('MF_ERR_INTERNAL', 'Internal server error');
  // A server-side failure (a plugin's bug, say) keeps its details, stack and cause, in the log only.
  if (!(thrown instanceof MediaflowError) || thrown.status >= 500) {
    logger.error({ job: id, code: error.code, err: thrown }, 'job failed');
  }
  return jobErrorOf(error);
}

/**
 * Jobs from submission to their last webhook: checks and stores a submission, queues it, runs it
 * when the queue says so, keeps its record and progress, cancels it, answers who waits for it,
 * and picks everything up again after a restart. Front ends only call this; none runs a job itself.
 */
export class JobService {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private stopping?: Promise<void>;
  /**
   * Aborted once the shutdown's grace is over: a job's end waiting for Redis stops waiting (the sweeper takes it up).
   */
  private readonly closing = new AbortController();
  /** Records the last orphan sweep found with no worker and no queue entry, and how each looked then. */
  private suspects = new Map<string, string>();
  readonly deliveries: WebhookDeliveries<JobRecord>;

  constructor(private readonly deps: JobServiceDeps) {
    this.deliveries = new WebhookDeliveries({
      store: deps.backend.store,
      events: deps.backend.events,
      untilReachable,
      config: deps.config,
      logger: deps.logger,
      queue: deps.backend.deliveries,
      deliver: deps.backend.works,
      ...(deps.observer ? { onOutcome: (outcome: DeliveryOutcome) => deps.observer!.delivery(outcome) } : {}),
    });
    if (deps.backend.works) deps.backend.queue.process((id) => this.work(id));
    deps.backend.events.onCancel((id) => this.running.get(id)?.controller.abort(CANCELLED));
  }

  get queue(): JobQueue {
    return this.deps.backend.queue;
  }

  /** Where jobs live: `embedded` or `redis`, and whether it answers (for /health). */
  get backend(): Pick<JobBackend, 'kind' | 'ping' | 'works' | 'bullQueues'> {
    return this.deps.backend;
  }

  private get store(): JobStore {
    return this.deps.backend.store;
  }

  private get events(): JobEvents {
    return this.deps.backend.events;
  }

  /** The public view of a record, with its result's URLs under the base the job was asked on. */
  view(record: JobRecord): Promise<JobView> {
    return jobView(record, this.urlsOf(record));
  }

  /** The synchronous success body of a finished job. */
  resultOf(record: JobRecord & { result: StoredResult }): Promise<Record<string, unknown>> {
    return resultBody(record.result, this.urlsOf(record));
  }

  /** Store paths to URLs under the base the job was asked on (or the bucket's). */
  private urlsOf(record: JobRecord): (path: string) => Promise<string> {
    return (path) => this.deps.outputStore.urlFor(path, record.base_url);
  }

  /** How many job records there are in each status. */
  counts(): Promise<Record<JobStatus, number>> {
    return this.store.counts();
  }

  /** Listens to one job's changes; returns the function that stops listening. */
  subscribe(id: string, listener: (record: JobRecord) => void): () => void {
    return this.events.subscribe(id, listener);
  }

  get(id: string): Promise<JobRecord | undefined> {
    return this.store.get(id);
  }

  /**
   * A record, or a 404 for an unknown or expired id. With several API keys, `owner` (the caller's
   * key hash) sees only its own jobs: another key's job is a 404 as well, so its existence is not
   * told either. Without an owner (one key or none), every job is seen.
   */
  async require(id: string, owner?: string): Promise<JobRecord> {
    const record = await this.store.get(id);
    if (!record || (owner !== undefined && record.owner !== owner)) {
      throw new MediaflowError('MF_ERR_NOT_FOUND', `Unknown job '${id}' (it may have expired)`);
    }
    return record;
  }

  /**
   * A page of the asynchronous jobs `owner` may read (with one key or none: all of them), newest first: at most `limit`
   * of them, those after the job `before` when it is given (a 404 when it has expired), and whether more follow. A
   * synchronous request's job is left out: its client got the answer, never the job's id.
   */
  async list(owner: string | undefined, limit: number, before?: string): Promise<{ jobs: JobRecord[]; more: boolean }> {
    const visible = (await this.store.list())
      .filter((record) => record.mode === 'async' && (owner === undefined || record.owner === owner))
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
    const at = before === undefined ? -1 : visible.findIndex((record) => record.id === before);
    if (before !== undefined && at < 0)
      throw new MediaflowError('MF_ERR_NOT_FOUND', `Unknown job '${before}' (it may have expired)`);
    const from = at + 1;
    return { jobs: visible.slice(from, from + limit), more: visible.length > from + limit };
  }

  /**
   * Checks and queues a job. Invalid fields are refused at once (400, 404), a full queue with a
   * 503. With an idempotency key already used, runs nothing: the same fields give the first job
   * (`created: false`), other fields a 422.
   */
  async submit(submission: Submission): Promise<{ record: JobRecord; created: boolean }> {
    const { store, queue } = this;
    if (this.stopping) throw busyError('The server is shutting down; retry later');
    const id = randomUUID();
    const { owner, idempotencyKey } = submission;
    // Hashed only when a key asks for it: the fields may hold a megabyte of text, hashed on the event loop.
    const print = idempotencyKey === undefined ? undefined : fingerprint(submission);
    if (idempotencyKey !== undefined) {
      const earlier = await this.byKey(idempotencyIndex(idempotencyKey, owner), idempotencyKey, print!);
      if (earlier) return { record: earlier, created: false };
    }
    // Its own UUID, not derived from the job id: whoever has an output URL cannot read or cancel the job.
    const outputId = randomUUID();
    const { kind, name, fields, ownBases } = submission;
    await checkJob({ id, output_id: outputId, kind, name, fields, own_bases: ownBases }, this.deps);
    const now = new Date().toISOString();
    const record: JobRecord = {
      id,
      output_id: outputId,
      ...(owner === undefined ? {} : { owner }),
      kind: submission.kind,
      name: submission.name,
      fields: submission.fields,
      base_url: submission.baseUrl,
      own_bases: submission.ownBases,
      mode: submission.mode,
      metadata: submission.metadata ?? null,
      idempotency:
        submission.idempotencyKey === undefined ? null : { key: submission.idempotencyKey, fingerprint: print! },
      status: 'queued',
      stage: 'queued',
      progress: 0,
      attempts: 0,
      created_at: now,
      started_at: null,
      finished_at: null,
      result: null,
      error: null,
      webhook: submission.webhookUrl
        ? {
            url: submission.webhookUrl,
            attempts: 0,
            last_status: null,
            delivered_at: null,
            message_id: `msg_${id}`,
            next_attempt_at: null,
          }
        : null,
    };
    const stored = await store.create(record);
    if (stored.id !== id) {
      // Another request with the same key was stored between the look-up above and this one.
      return { record: this.sameFields(stored, submission.idempotencyKey!, print!), created: false };
    }
    try {
      await queue.add(id);
    } catch (error) {
      // Refused (503): the job never existed for the client, so neither does its record.
      await store.remove(id);
      throw error;
    }
    return { record: stored, created: true };
  }

  /** The job that holds an idempotency key (by its index), when the fields are the same; a 422 when not. */
  private async byKey(index: string, key: string, print: string): Promise<JobRecord | undefined> {
    const earlier = await this.store.byKey(index);
    return earlier && this.sameFields(earlier, key, print);
  }

  private sameFields(record: JobRecord, key: string, print: string): JobRecord {
    if (record.idempotency?.fingerprint !== print) {
      throw new MediaflowError('MF_ERR_IDEMPOTENCY', `Idempotency-Key '${key}' was already used with other fields`);
    }
    return record;
  }

  /**
   * Resolves with the job's record once it is final. A signal that fires first (the synchronous
   * client hung up) cancels the job, and the promise rejects with the signal's reason.
   */
  async waitFor(id: string, signal?: AbortSignal): Promise<JobRecord> {
    let unsubscribe = () => {};
    try {
      return await new Promise<JobRecord>((resolve, reject) => {
        unsubscribe = this.events.subscribe(id, (record) => {
          if (isTerminal(record.status)) resolve(record);
        });
        const onAbort = () => {
          reject(signal!.reason);
          void this.cancel(id).catch(() => undefined);
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        // The job may have ended before the subscription: look once after subscribing.
        void this.store.get(id).then((record) => {
          if (!record) reject(new MediaflowError('MF_ERR_NOT_FOUND', `Unknown job '${id}'`));
          else if (isTerminal(record.status)) resolve(record);
        }, reject);
      });
    } finally {
      unsubscribe();
    }
  }

  /** Resolves when the job is final, or after `ms` (a worker that is gone never answers). */
  private async ended(id: string, ms: number): Promise<void> {
    let unsubscribe = () => {};
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      unsubscribe = this.events.subscribe(id, (record) => isTerminal(record.status) && resolve());
      void this.store.get(id).then(
        (record) => (!record || isTerminal(record.status)) && resolve(),
        () => resolve(),
      );
    });
    clearTimeout(timer);
    unsubscribe();
  }

  /**
   * Cancels a queued or running job: off the queue, or its ffmpeg killed and its files removed.
   * Resolves with the record once it is final; a job that had already finished is a 409.
   */
  async cancel(id: string, owner?: string): Promise<JobRecord> {
    const record = await this.require(id, owner);
    if (isTerminal(record.status)) {
      throw new MediaflowError('MF_ERR_JOB_STATE', `Job '${id}' has already finished (${record.status})`);
    }
    if ((await this.queue.remove(id)) || record.status === 'queued') {
      await this.finish(id, 'cancelled', {});
    } else {
      // Whichever process runs it stops it (its ffmpeg killed, its files removed), then records `cancelled`.
      this.events.requestCancel(id);
      await (this.running.get(id)?.done ?? this.ended(id, CANCEL_WAIT_MS));
    }
    return this.require(id);
  }

  /** The queue's handler: runs one job and records how it ended. */
  private async work(id: string): Promise<'finished' | 'handed-back'> {
    const { store } = this;
    const { config, logger, observer } = this.deps;
    const record = await store.get(id);
    if (!record || isTerminal(record.status)) return 'finished';
    // A job found `running` was taken back from a worker that died (BullMQ's stalled jobs).
    if (await this.givenUp(record)) return 'finished';
    const controller = new AbortController();
    let settle!: () => void;
    this.running.set(id, { controller, done: new Promise<void>((resolve) => (settle = resolve)) });
    try {
      // Redis failing here throws out of the handler: the job was not run, and the sweeper runs it.
      const started = await store.update(id, (r) => {
        // A cancel may have landed since the record was read: then this run does not start.
        if (r.status !== record.status) return;
        r.status = 'running';
        r.attempts += 1;
        r.stage = attemptStage('starting', r.attempts, config.jobAttempts);
        r.started_at = new Date().toISOString();
      });
      if (started?.status !== 'running') return 'finished';
      this.publish(started);
      observer?.started((Date.now() - Date.parse(record.created_at)) / 1000);
      let ending: Parameters<JobService['finish']>;
      try {
        const onProgress = this.progressOf(id, started.attempts);
        const { result, timings } = await runJob(record, this.deps, { signal: controller.signal, onProgress });
        ending = [id, 'succeeded', { result, timings }];
      } catch (error) {
        if (controller.signal.aborted && controller.signal.reason === SHUTDOWN) return await this.afterShutdown(id);
        ending =
          controller.signal.aborted || isAbort(error)
            ? [id, 'cancelled', {}]
            : [id, 'failed', { error: errorBody(error, logger, id) }];
      }
      // Outside the run's try: a job that ran is never recorded `failed` because Redis was away as it ended.
      await this.finish(...ending);
    } finally {
      this.running.delete(id);
      settle();
    }
    return 'finished';
  }

  /** Progress reports of a running job, written and told at most every 500 ms, never going down. */
  private progressOf(id: string, attempt: number): (report: ProgressReport) => void {
    let last = 0;
    let stage = '';
    return (report) => {
      const now = Date.now();
      if (report.stage === stage && now - last < PROGRESS_EVERY_MS) return;
      last = now;
      stage = report.stage;
      void this.store
        .update(id, (r) => {
          if (r.status !== 'running') return;
          r.stage = attemptStage(report.stage, attempt, this.deps.config.jobAttempts);
          r.progress = Math.max(r.progress, Math.min(99, report.progress));
        })
        .then(
          (updated) => updated?.status === 'running' && this.publish(updated),
          () => undefined,
        );
    };
  }

  /**
   * The one rule for a job that keeps being interrupted: found `running` (its process or worker stopped
   * while it ran) after MEDIAFLOW_JOB_ATTEMPTS runs, it is `failed`, saying why. True when it was given up.
   */
  private async givenUp(record: JobRecord): Promise<boolean> {
    const limit = this.deps.config.jobAttempts;
    if (record.status !== 'running' || record.attempts < limit) return false;
    const error = jobErrorOf(new MediaflowError('MF_ERR_INTERNAL', interruptedMessage(record.attempts, limit)));
    await this.finish(record.id, 'failed', { error });
    return true;
  }

  /** Records a final state, tells listeners, and arranges the webhook. */
  private async finish(id: string, status: JobStatus, outcome: Ending): Promise<void> {
    // The end and its webhook are kept through a Redis outage, tried again until Redis is back: a job
    // left `running` with its output published would be lost (no queue entry, no webhook).
    const retry = { logger: this.deps.logger, job: id, signal: this.closing.signal };
    const at = new Date().toISOString();
    const updated = await untilReachable(
      () => this.recordWithin(id, status, outcome, at),
      'recording the end of a job',
      retry,
    );
    if (!updated) return;
    const { name, error, timings } = updated;
    this.deps.logger.info(
      { job: id, name, status: updated.status, ...(error ? { error } : {}), ...(timings ? { timings } : {}) },
      'job ended',
    );
    this.publish(updated);
    await untilReachable(() => this.deliveries.schedule(updated), 'arranging the webhook of a job', retry);
  }

  /**
   * Stores a final state as `record` does, within MEDIAFLOW_MAX_RECORD_BYTES: a result too large for
   * its record fails the job with the 413 that says so, its outputs removed, rather than be kept.
   */
  private async recordWithin(
    id: string,
    status: JobStatus,
    outcome: Ending,
    at: string,
  ): Promise<JobRecord | undefined> {
    try {
      return await this.record(id, status, outcome, at);
    } catch (error) {
      if (!(error instanceof RecordTooLargeError) || !outcome.result) throw error;
      await this.deps.outputStore.remove(resultPaths(outcome.result));
      const timings = outcome.timings ? { timings: outcome.timings } : {};
      return this.record(id, 'failed', { error: jobErrorOf(error), ...timings }, at);
    }
  }

  /**
   * Stores a final state, ended `at`; undefined when the record is gone or had already ended (it ends
   * once). A record that ended `at` with this status is this end, stored by a try whose answer was lost.
   */
  private async record(id: string, status: JobStatus, outcome: Ending, at: string): Promise<JobRecord | undefined> {
    const current = await this.store.get(id);
    if (current && current.status === status && current.finished_at === at) return current;
    if (!current || isTerminal(current.status)) return undefined;
    const ended = { ...current, status, stage: status, finished_at: at };
    // The webhook's body is fixed now: every attempt sends the same bytes, with the job as it ended.
    const payload = current.webhook
      ? JSON.stringify(
          await this.view({
            ...ended,
            result: outcome.result ?? null,
            error: outcome.error ?? null,
            progress: status === 'succeeded' ? 100 : current.progress,
          }),
        )
      : undefined;
    let ends = false;
    const updated = await this.store.update(id, (r) => {
      ends = false;
      if (isTerminal(r.status)) return;
      ends = true;
      r.status = status;
      r.stage = status;
      r.finished_at = ended.finished_at;
      r.result = outcome.result ?? null;
      r.error = outcome.error ?? null;
      if (status === 'succeeded') r.progress = 100;
      if (outcome.timings) r.timings = outcome.timings;
      if (r.webhook && payload !== undefined) {
        r.webhook.next_attempt_at = r.finished_at;
        r.webhook.payload = payload;
      }
    });
    return ends ? updated : undefined;
  }

  /**
   * A run stopped by a graceful shutdown is not one of the job's attempts: an asynchronous job goes
   * back to the queue for the next start; a synchronous one answers its client 503, retry later.
   */
  private async afterShutdown(id: string): Promise<'finished' | 'handed-back'> {
    const record = await this.store.get(id);
    if (record?.mode === 'sync') {
      await this.finish(id, 'failed', { error: SHUTTING_DOWN });
      return 'finished';
    }
    await this.store.update(id, (r) => {
      r.status = 'queued';
      r.stage = 'queued';
      r.attempts = Math.max(0, r.attempts - 1);
    });
    return 'handed-back';
  }

  private publish(record: JobRecord | undefined): void {
    if (record) this.events.publish(record);
  }

  /**
   * Picks up what a stopped process left: queued jobs are queued again, jobs that were running run
   * again (at most MEDIAFLOW_JOB_ATTEMPTS runs in all, then `failed`), owed webhooks are delivered.
   * A synchronous job's client went with the process that held its connection: it is cancelled,
   * as a client that disconnects cancels its job.
   */
  async recover(): Promise<{ requeued: number; failed: number; cancelled: number; deliveries: number }> {
    const counts = { requeued: 0, failed: 0, cancelled: 0, deliveries: 0 };
    const records = (await this.store.unfinished()).sort((a, b) => a.created_at.localeCompare(b.created_at));
    for (const record of records) {
      if (!isTerminal(record.status) && record.mode === 'sync') {
        await this.finish(record.id, 'cancelled', {});
        counts.cancelled++;
        continue;
      }
      const taken = await this.resume(record);
      if (taken) counts[taken]++;
    }
    return counts;
  }

  /**
   * Finds records nothing will move on: not finished, with no live worker and no queue entry (Redis
   * restarted as the job started or ended, say), or finished and owing a webhook attempt that nothing
   * arranged. Seen so on two sweeps in a row, unchanged, each is taken up as a restart would: run
   * again within MEDIAFLOW_JOB_ATTEMPTS, failed past it, its webhook arranged. Twice, because a new
   * record is stored just before its queue entry, and a job's end just before its webhook.
   */
  async sweepOrphans(): Promise<{ requeued: number; failed: number; deliveries: number }> {
    const counts = { requeued: 0, failed: 0, deliveries: 0 };
    const seen = new Map<string, string>();
    for (const record of await this.store.unfinished()) {
      const orphan = isTerminal(record.status)
        ? await this.deliveries.unarranged(record)
        : !this.running.has(record.id) && !(await this.queue.holds(record.id));
      if (!orphan) continue;
      const { status, attempts, started_at, webhook } = record;
      const look = JSON.stringify([status, attempts, started_at, webhook?.attempts, webhook?.next_attempt_at]);
      seen.set(record.id, look);
      if (this.suspects.get(record.id) !== look) continue;
      this.deps.logger.warn(
        { job: record.id, status, attempts },
        'no worker or queue holds this job; taking it up again',
      );
      const taken = await this.resume(record);
      if (taken) counts[taken]++;
    }
    this.suspects = seen;
    return counts;
  }

  /** Sweeps for orphans every `everyMs` until shutdown; a sweep that fails (Redis away) waits for the next. */
  watch(everyMs: number): void {
    let sweeping = false;
    const timer = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      this.sweepOrphans()
        .then(
          (counts) =>
            Object.values(counts).some((n) => n > 0) &&
            this.deps.logger.info(counts, 'took up jobs no worker or queue held'),
          (error: unknown) =>
            this.deps.logger.warn({ err: error }, 'sweeping for lost jobs failed; trying at the next sweep'),
        )
        .finally(() => (sweeping = false));
    }, everyMs).unref();
    this.closing.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  /**
   * Takes up a record that no process works on: an owed webhook is arranged; a job is queued again,
   * or failed once its runs reach MEDIAFLOW_JOB_ATTEMPTS. Undefined when it changed meanwhile.
   */
  private async resume(record: JobRecord): Promise<'requeued' | 'failed' | 'deliveries' | undefined> {
    if (isTerminal(record.status)) {
      await this.deliveries.schedule(record);
      return 'deliveries';
    }
    if (await this.givenUp(record)) return 'failed';
    let again = false;
    await this.store.update(record.id, (r) => {
      // Only as it was seen: a worker that has taken the job meanwhile keeps it.
      again = r.status === record.status && r.attempts === record.attempts;
      if (!again) return;
      r.status = 'queued';
      r.stage = 'queued';
    });
    if (!again) return undefined;
    await this.queue.add(record.id, { force: true });
    return 'requeued';
  }

  /** Deletes records (and their outputs) that finished more than MEDIAFLOW_RETENTION ago. */
  async sweep(now = Date.now()): Promise<number> {
    if (this.deps.config.retentionMs <= 0) return 0;
    const expired = await this.store.expire(now - this.deps.config.retentionMs);
    for (const record of expired) await this.deps.outputStore.remove(resultPaths(record.result));
    return expired.length;
  }

  /**
   * Stops taking jobs, lets running ones finish for up to `graceMs`, then stops the rest and puts
   * them back in the queue for the next start. Owed webhooks stay in their records.
   */
  shutdown(graceMs: number): Promise<void> {
    // Once: the server's close hook asks again after the signal handler has given its grace period.
    this.stopping ??= this.stop(graceMs);
    return this.stopping;
  }

  private async stop(graceMs: number): Promise<void> {
    await this.queue.pause();
    // Clients waiting on a synchronous job that has not started get their 503 now, not at the deadline.
    for (const record of await this.store.unfinished().catch(() => [])) {
      if (
        record.mode === 'sync' &&
        record.status === 'queued' &&
        (await this.queue.remove(record.id).catch(() => false))
      ) {
        await this.finish(record.id, 'failed', { error: SHUTTING_DOWN });
      }
    }
    const all = () => Promise.all([...this.running.values()].map((entry) => entry.done));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    if ((await Promise.race([all(), late])) === 'late') {
      for (const entry of this.running.values()) entry.controller.abort(SHUTDOWN);
      this.closing.abort();
      await all();
    }
    clearTimeout(timer);
    this.closing.abort();
    // Last: jobs that ended meanwhile still scheduled their webhooks.
    await this.deliveries.close();
    await this.queue.close();
    await this.deps.backend.close();
  }
}
