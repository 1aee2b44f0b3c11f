import type { Problem } from '../../src/sdk.js';

/**
 * The API as the page calls it: relative to the page (served at `<base>/studio/`, so that it works under a proxy's
 * sub-path too), with the API key of this tab, and errors in the API's own shape.
 */

/** The server's base: the folder above the page's. */
const BASE = new URL('../', location.href);

export const apiUrl = (path: string): string => new URL(path.replace(/^\//, ''), BASE).href;

const KEY = 'mediaflow.apiKey';

/** The API key, kept for this tab only (sessionStorage): closing the tab forgets it. */
export const apiKey = {
  get: (): string | undefined => sessionStorage.getItem(KEY) ?? undefined,
  set: (key: string): void => sessionStorage.setItem(KEY, key),
  clear: (): void => sessionStorage.removeItem(KEY),
};

/** An answer that is not a success: its status, and the API's `error`, `code` and `errors`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly errors: Problem[] = [],
  ) {
    super(message);
  }
}

/** Told when an answer is a 401: the page asks for the key. */
export const AUTH_EVENT = 'mediaflow:auth';

/** A request to the API with the key; a non-2xx answer is thrown as an ApiError. */
export async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const key = apiKey.get();
  if (key !== undefined) headers.set('x-api-key', key);
  const response = await fetch(apiUrl(path), { ...init, headers });
  if (response.ok) return response;
  let body: { error?: unknown; code?: unknown; errors?: unknown } = {};
  try {
    body = (await response.json()) as typeof body;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  const error = new ApiError(
    response.status,
    typeof body.error === 'string' ? body.error : `${response.status} ${response.statusText}`,
    typeof body.code === 'string' ? body.code : undefined,
    Array.isArray(body.errors) ? (body.errors as Problem[]) : [],
  );
  if (response.status === 401) window.dispatchEvent(new CustomEvent(AUTH_EVENT, { detail: error.message }));
  throw error;
}

/** A request whose answer is JSON. */
export async function callJson<T>(path: string, init: RequestInit = {}): Promise<T> {
  return (await (await call(path, init)).json()) as T;
}

/** A JSON body for `init`, with `Prefer: respond-async` when it is to run as a job. */
export function jsonBody(body: unknown, asJob = false): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(asJob ? { prefer: 'respond-async' } : {}) },
    body: JSON.stringify(body),
  };
}

/**
 * Whether a URL is one of this server's outputs, as the page may show it: the page's own origin, under /uploads/.
 * An output elsewhere (an S3 bucket's) is linked to, never loaded into the page (its CSP would refuse it anyway).
 */
export function isOwnOutput(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.origin === BASE.origin && parsed.pathname.startsWith(`${BASE.pathname}uploads/`);
  } catch {
    return false;
  }
}

/** The job object of `GET /jobs/<id>` and its events (docs/jobs.md). */
export interface Job {
  job_id: string;
  kind: string;
  name: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  stage: string;
  progress: number;
  created_at: string;
  result: Record<string, unknown> | null;
  error: { status: number; error: string; code?: string } | null;
}

export const isFinal = (job: Job): boolean => ['succeeded', 'failed', 'cancelled'].includes(job.status);
