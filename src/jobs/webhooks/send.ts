/** One webhook POST under the inputs' address policy, reduced to a verdict the scheduler can store. */
import http from 'node:http';
import https from 'node:https';
import { checkUrl, type AddressPolicy } from '../../engine/inputs/address-guard.js';
import { MediaflowError } from '../../engine/errors.js';
import { describeNetworkError, guardedLookup } from '../../engine/inputs/fetcher.js';

/** What one attempt came to: `ok` only for a 2xx; `status` null when no answer arrived. */
export interface WebhookAttempt {
  ok: boolean;
  status: number | null;
  /** Why it is not ok, short enough for a job record and a log line. */
  error?: string;
}

/** Options of one attempt. */
export interface PostWebhookOptions {
  /** The same address policy as input downloads. */
  policy: AddressPolicy;
  /** Bounds the whole attempt: connecting, the answer and reading its body. */
  timeoutMs: number;
  /** Cancels the attempt (shutdown); the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Reading stops here: a receiver's answer body is only drained, never used. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * POSTs `body` once to `url`. Never follows redirects and never throws for network reasons or
 * refused addresses: those come back as `ok: false`. Rejects only when `options.signal` aborts
 * before an answer arrived.
 */
export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: PostWebhookOptions,
): Promise<WebhookAttempt> {
  let target: URL;
  try {
    // Scheme, credentials and literal IPs; names are checked by guardedLookup as they resolve.
    target = checkUrl(url, options.policy);
  } catch (refusal) {
    return Promise.resolve({ ok: false, status: null, error: (refusal as Error).message });
  }
  if (options.signal?.aborted) return Promise.reject(options.signal.reason);

  return new Promise((resolve, reject) => {
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(target, {
      method: 'POST',
      // A fresh connection per attempt: retries are hours apart, and a pooled socket could outlive its address check.
      agent: false,
      lookup: guardedLookup(url, undefined, options.policy),
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    });
    // Once the status line is in, it decides the verdict; the body is read only so the receiver can finish.
    let verdict: WebhookAttempt | undefined;
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      req.destroy();
      outcome();
    };
    const finish = (attempt: WebhookAttempt) => settle(() => resolve(attempt));
    const timer = setTimeout(
      () => finish(verdict ?? { ok: false, status: null, error: `no answer within ${options.timeoutMs / 1000} s` }),
      options.timeoutMs,
    );
    const onAbort = () => (verdict ? finish(verdict) : settle(() => reject(options.signal!.reason)));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    // `on`, not `once`: a second socket error without a listener would crash the process.
    req.on('error', (error) => finish(verdict ?? { ok: false, status: null, error: describeError(error) }));
    req.on('response', (res) => {
      verdict = judge(res, target);
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= MAX_BODY_BYTES) finish(verdict!);
      });
      // 'close' also follows an answer cut short: the status already said what the receiver meant.
      res.on('close', () => finish(verdict!));
      res.on('error', () => finish(verdict!));
    });
    req.end(body);
  });
}

/** The verdict a response's status line gives. */
function judge(res: http.IncomingMessage, from: URL): WebhookAttempt {
  const status = res.statusCode ?? 0;
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) {
    const location = res.headers.location;
    return {
      ok: false,
      status,
      error: location
        ? `redirect to ${shorten(resolveLocation(location, from))} not followed`
        : `HTTP ${status} redirect not followed`,
    };
  }
  return { ok: false, status, error: `HTTP ${status}` };
}

const resolveLocation = (location: string, from: URL): string => {
  try {
    return new URL(location, from).href;
  } catch {
    return location;
  }
};

/** The receiver chooses the Location; it goes into job records and logs, so it is kept short. */
const shorten = (text: string): string => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** A short reason for a failed connection; a refused address keeps the guard's message. */
function describeError(error: unknown): string {
  if (error instanceof MediaflowError) return error.message;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof MediaflowError) return cause.message;
  return shorten(describeNetworkError(error as NodeJS.ErrnoException));
}
