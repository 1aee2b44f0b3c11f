import dns from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { bareHost, checkResolved, checkUrl, type AddressPolicy } from '../../engine/inputs/address-guard.js';
import type { Config } from '../../engine/config.js';
import { urlError } from '../../engine/errors.js';
import type { Logger } from '../../engine/logger.js';
import { retryDelayMs } from './backoff.js';
import { postWebhook } from './send.js';
import { parseWebhookSecret, webhookHeaders } from './signing.js';
import type { OwingRecord } from './state.js';

/** What a delivery attempt came to, for metrics. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';

/**
 * Webhook targets pass the inputs' address rule (no private, loopback or link-local address
 * unless allowed); the host allowlist of inputs (MEDIAFLOW_ALLOWED_HOSTS) is about where media
 * may come from, not where callbacks go, so it does not apply. A host the operator names in
 * MEDIAFLOW_WEBHOOK_ALLOWED_HOSTS (an n8n beside mediaflow) may be on a private address without
 * private inputs being allowed too.
 */
export function webhookPolicy(config: Config, url: string): AddressPolicy {
  return { allowPrivate: config.allowPrivateUrls || namedForWebhooks(url, config), allowedHosts: [] };
}

function namedForWebhooks(raw: string, config: Config): boolean {
  if (config.webhookAllowedHosts.length === 0) return false;
  try {
    return config.webhookAllowedHosts.includes(bareHost(new URL(raw)).toLowerCase());
  } catch {
    // Not a URL: checkUrl says so.
    return false;
  }
}

/**
 * Checks a `webhook_url` at submission: an absolute http(s) URL whose host resolves only to
 * allowed addresses. Delivery checks the addresses again as it connects (a name may change).
 */
export async function checkWebhookUrl(raw: string, config: Config): Promise<void> {
  const policy = webhookPolicy(config, raw);
  let url: URL;
  try {
    url = checkUrl(raw, policy);
  } catch (error) {
    throw urlError(`Invalid webhook_url: ${(error as Error).message}`);
  }
  const host = bareHost(url);
  if (policy.allowPrivate || ipaddr.isValid(host)) return;
  let addresses: string[];
  try {
    addresses = (await dns.lookup(host, { all: true })).map((entry) => entry.address);
  } catch {
    throw urlError(`Invalid webhook_url: its host ${host} does not resolve`);
  }
  try {
    checkResolved(raw, addresses, policy);
  } catch (error) {
    throw urlError(`Invalid webhook_url: ${(error as Error).message}`);
  }
}

/**
 * When each owed delivery is attempted. In one process, timers (the records are the durable
 * part: a restart schedules what they owe again); with Redis, delayed jobs on a queue of their own.
 */
export interface DeliveryQueue {
  /** Arranges an attempt for the job's webhook at `at` (ms since the epoch). */
  schedule(id: string, at: number): Promise<void>;
  /** Whether the attempt due at `at` is arranged or being made (the sweeper arranges it again when not). */
  holds(id: string, at: number): Promise<boolean>;
  /** Sets the function that makes an attempt. */
  process(attempt: (id: string) => Promise<void>): void;
  close(): Promise<void>;
}

/** Timers in this process. */
export class LocalDeliveryQueue implements DeliveryQueue {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Attempts being made now. */
  private readonly making = new Set<string>();
  private attempt?: (id: string) => Promise<void>;
  private closed = false;

  async schedule(id: string, at: number): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.timers.get(id));
    // setTimeout fires at once past 2^31-1 ms (24.8 days); the attempt re-schedules a wait that is not over.
    const delay = Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1);
    // Unref'd: a retry hours away must not keep a stopping process alive; it is in the record.
    this.timers.set(
      id,
      setTimeout(() => {
        this.timers.delete(id);
        this.making.add(id);
        void this.attempt?.(id).finally(() => this.making.delete(id));
      }, delay).unref(),
    );
  }

  async holds(id: string): Promise<boolean> {
    return this.timers.has(id) || this.making.has(id);
  }

  process(attempt: (id: string) => Promise<void>): void {
    this.attempt = attempt;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

/**
 * Runs a write until the records can be reached (jobs/retry.ts' `untilReachable`: Redis may be away).
 * Given, not imported: the records and their store belong to jobs/, which uses webhooks/.
 */
export type UntilReachable = <T>(
  work: () => Promise<T>,
  what: string,
  context: { logger: Logger; job: string; signal: AbortSignal },
) => Promise<T>;

/**
 * What deliveries are built with. The records are the jobs' (R is the job record), seen only
 * through the few methods deliveries call, so that webhooks/ imports nothing from jobs/.
 */
export interface DeliveryDeps<R extends OwingRecord> {
  /** Where each delivery's state is kept, in its job's record (the job store). */
  store: {
    get(id: string): Promise<R | undefined>;
    update(id: string, change: (record: R) => void): Promise<R | undefined>;
  };
  /** Tells a record's listeners that it changed (the job events). */
  events: { publish(record: R): void };
  untilReachable: UntilReachable;
  config: Config;
  logger: Logger;
  queue: DeliveryQueue;
  /** Whether this process makes attempts (it works jobs); an API-only process only schedules. */
  deliver: boolean;
  onOutcome?: (outcome: DeliveryOutcome) => void;
}

/**
 * Delivers each finished job's webhook, and retries with back-off until a receiver answers 2xx
 * or the attempts run out. The state lives in the job record (`webhook`), written after every
 * attempt, so a restart picks up exactly the deliveries still owed. A failed delivery never
 * touches the job itself.
 */
export class WebhookDeliveries<R extends OwingRecord> {
  private readonly key: Buffer | undefined;

  /** Aborted at close: what waits for Redis to come back stops waiting (the record still owes the delivery). */
  private readonly closing = new AbortController();

  constructor(private readonly deps: DeliveryDeps<R>) {
    this.key = deps.config.webhookSecret ? parseWebhookSecret(deps.config.webhookSecret) : undefined;
    if (deps.deliver) deps.queue.process((id) => this.attempt(id));
  }

  /** Whether the record owes an attempt that nothing has arranged (a Redis outage lost it): for the sweeper. */
  async unarranged(record: OwingRecord): Promise<boolean> {
    const next = record.webhook?.next_attempt_at;
    return next !== null && next !== undefined && !(await this.deps.queue.holds(record.id, Date.parse(next)));
  }

  /** Arranges the next attempt of the record's webhook, if one is owed. */
  async schedule(record: OwingRecord): Promise<void> {
    const next = record.webhook?.next_attempt_at;
    if (next === null || next === undefined) return;
    await this.deps.queue.schedule(record.id, Date.parse(next));
  }

  /** Stops scheduling; owed deliveries stay in their records (or on their queue) for later. */
  close(): Promise<void> {
    this.closing.abort();
    return this.deps.queue.close();
  }

  private async attempt(id: string): Promise<void> {
    const { store, events, untilReachable, config, logger } = this.deps;
    const record = await store.get(id);
    const webhook = record?.webhook;
    if (!webhook || webhook.next_attempt_at === null || webhook.payload === undefined) return;
    if (Date.parse(webhook.next_attempt_at) > Date.now() + 1000) return this.schedule(record!);
    const headers = webhookHeaders(this.key, webhook.message_id, webhook.payload);
    const answer = await postWebhook(webhook.url, webhook.payload, headers, {
      policy: webhookPolicy(config, webhook.url),
      timeoutMs: config.webhookTimeoutMs,
    });
    const attempts = webhook.attempts + 1;
    const outcome: DeliveryOutcome = answer.ok ? 'delivered' : attempts >= config.webhookAttempts ? 'failed' : 'retry';
    // The receiver has had this attempt: its outcome and the next attempt are kept through a Redis
    // outage, or the delivery would never be tried again (nor marked delivered).
    const retry = { logger, job: id, signal: this.closing.signal };
    const updated = await untilReachable(
      () =>
        store.update(id, (current) => {
          const state = current.webhook!;
          state.attempts = attempts;
          state.last_status = answer.status;
          if (answer.ok) {
            state.delivered_at = new Date().toISOString();
            delete state.last_error;
          } else state.last_error = answer.error ?? `HTTP ${answer.status}`;
          if (outcome === 'retry')
            state.next_attempt_at = new Date(
              Date.now() + retryDelayMs(attempts, config.webhookBackoffMs),
            ).toISOString();
          else {
            state.next_attempt_at = null;
            // Nothing more will be sent: the body need not be kept.
            delete state.payload;
          }
        }),
      'recording a webhook attempt',
      retry,
    );
    this.deps.onOutcome?.(outcome);
    const log = {
      job: id,
      attempt: attempts,
      status: answer.status,
      ...(answer.error ? { reason: answer.error } : {}),
    };
    if (outcome === 'delivered') logger.info(log, 'webhook delivered');
    else
      logger.warn(
        log,
        outcome === 'retry' ? 'webhook attempt failed; will retry' : 'webhook attempts exhausted; giving up',
      );
    if (!updated) return;
    events.publish(updated);
    await untilReachable(() => this.schedule(updated), 'arranging the next webhook attempt', retry);
  }
}
