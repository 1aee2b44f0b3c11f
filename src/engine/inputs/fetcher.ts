import dns from 'node:dns';
import { createWriteStream } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkRedirect, checkResolved, checkUrl, type AddressPolicy } from './address-guard.js';
import { diskFullError, downloadError, MediaflowError, tooLargeError } from '../errors.js';

/** Limits of one download. */
export interface FetchLimits extends AddressPolicy {
  maxBytes: number;
  /** The setting behind `maxBytes`, for the 413's message (MEDIAFLOW_MAX_INPUT_BYTES unless told). */
  maxBytesSetting?: string;
  timeoutMs: number;
  firstByteTimeoutMs: number;
  maxRedirects: number;
}

/** Bytes left for all inputs of one request; shared by its parallel downloads. */
export class ByteBudget {
  constructor(
    private remaining: number,
    readonly limit: number,
  ) {}
  take(bytes: number): boolean {
    this.remaining -= bytes;
    return this.remaining >= 0;
  }
  /** Whether `bytes` more would still fit (a declared Content-Length, before any byte is read). */
  fits(bytes: number): boolean {
    return bytes <= this.remaining;
  }
}

export interface FetchResult {
  bytes: number;
  contentType?: string;
  /** The server answered 304 to a conditional request: nothing was written. */
  notModified?: boolean;
  /** The response's headers, for caching decisions. */
  headers?: http.IncomingHttpHeaders;
}

export const formatBytes = (bytes: number) =>
  bytes >= 1024 ** 3
    ? `${+(bytes / 1024 ** 3).toFixed(2)} GiB`
    : bytes >= 1024 ** 2
      ? `${+(bytes / 1024 ** 2).toFixed(2)} MiB`
      : `${bytes} bytes`;

export const inputTooLarge = (url: string, limit: number, setting = 'MEDIAFLOW_MAX_INPUT_BYTES') =>
  tooLargeError(`Input ${url} is larger than the limit of ${formatBytes(limit)} (${setting})`);
export const requestTooLarge = (limit: number) =>
  tooLargeError(
    `The inputs of this request add up to more than the limit of ${formatBytes(limit)} (MEDIAFLOW_MAX_REQUEST_BYTES)`,
  );

/**
 * A pass-through that counts the bytes of one input (a download's body, an uploaded file) and fails
 * with a 413 at the first chunk past its limit or past the request's budget, so that no more is read.
 */
export function byteMeter(
  source: string,
  limits: Pick<FetchLimits, 'maxBytes' | 'maxBytesSetting'>,
  budget?: ByteBudget,
): Transform & { readonly bytes: number } {
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) return done(inputTooLarge(source, limits.maxBytes, limits.maxBytesSetting));
      if (budget && !budget.take(chunk.length)) return done(requestTooLarge(budget.limit));
      done(null, chunk);
    },
  });
  return Object.defineProperty(meter, 'bytes', { get: () => bytes }) as Transform & { readonly bytes: number };
}

/**
 * A DNS lookup that checks every address the name resolves to and hands the socket only those
 * checked addresses, so the connection goes where the check looked (no second lookup to rebind).
 */
export function guardedLookup(raw: string, redirect: string | undefined, policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      try {
        checkResolved(
          raw,
          addresses.map((a) => a.address),
          policy,
          redirect,
        );
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * One HTTP exchange: resolves with the response once headers arrive. `redirected` says the URL came from a redirect.
 */
function request(
  url: URL,
  raw: string,
  limits: FetchLimits,
  signal: AbortSignal,
  redirected: boolean,
  extraHeaders: Record<string, string>,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.get(url, {
      lookup: guardedLookup(raw, redirected ? url.href : undefined, limits),
      signal,
      headers: { 'user-agent': 'mediaflow', accept: '*/*', ...extraHeaders },
      agent: false,
    });
    const firstByte = setTimeout(
      () => req.destroy(downloadError(raw, `no response within ${limits.firstByteTimeoutMs / 1000} s`)),
      limits.firstByteTimeoutMs,
    );
    req.once('response', (res) => {
      clearTimeout(firstByte);
      resolve(res);
    });
    // `on`, not `once`: a socket error after the response (the body cut short) is emitted here too,
    // and a second one without a listener would crash the process. Rejecting twice is harmless.
    req.on('error', (error) => {
      clearTimeout(firstByte);
      reject(error);
    });
  });
}

/** A short reason for a network error, without internals (downloads and webhook attempts). */
export function describeNetworkError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return error.message || String(error.code ?? 'network error');
  }
}

/**
 * Streams `rawUrl` to `destination` (never buffered whole), following up to `maxRedirects`
 * redirects, each hop re-checked. Stops at once when a limit is passed.
 */
export async function download(
  rawUrl: string,
  destination: string,
  limits: FetchLimits,
  options: { signal?: AbortSignal; budget?: ByteBudget; headers?: Record<string, string> } = {},
): Promise<FetchResult> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let url = checkUrl(rawUrl, limits);
  try {
    for (let hop = 0; ; hop++) {
      const res = await request(url, rawUrl, limits, signal, hop > 0, options.headers ?? {});
      const status = res.statusCode ?? 0;
      if (status === 304 && options.headers) {
        res.destroy();
        return { bytes: 0, notModified: true, headers: res.headers };
      }
      if (status >= 300 && status < 400 && res.headers.location) {
        // A redirect's body is never read: the connection is dropped (an endless body cannot hold it).
        res.destroy();
        if (hop >= limits.maxRedirects) throw downloadError(rawUrl, `more than ${limits.maxRedirects} redirects`);
        url = checkRedirect(rawUrl, res.headers.location, url, limits);
        continue;
      }
      if (status < 200 || status >= 300) {
        res.destroy();
        throw downloadError(rawUrl, `HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`);
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        res.destroy();
        throw inputTooLarge(rawUrl, limits.maxBytes, limits.maxBytesSetting);
      }
      if (Number.isFinite(declared) && options.budget && !options.budget.fits(declared)) {
        res.destroy();
        throw requestTooLarge(options.budget.limit);
      }
      const meter = byteMeter(rawUrl, limits, options.budget);
      await pipeline(res, meter, createWriteStream(destination), { signal });
      const bytes = meter.bytes;
      const contentType = res.headers['content-type'];
      return contentType ? { bytes, contentType, headers: res.headers } : { bytes, headers: res.headers };
    }
  } catch (error) {
    if (error instanceof MediaflowError) throw error;
    // Writing the body failed, not the download: the server's disk is full (507, not 502).
    const full = diskFullError(error);
    if (full) throw full;
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    if (timeout.aborted) throw downloadError(rawUrl, `timed out after ${limits.timeoutMs / 1000} s`, error);
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof MediaflowError) throw cause;
    throw downloadError(rawUrl, describeNetworkError(error as NodeJS.ErrnoException), error);
  }
}
