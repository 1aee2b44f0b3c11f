import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiKeysOf, type Config } from '../engine/config.js';
import { MediaflowError } from '../engine/errors.js';

/**
 * Who may call what: operations, pipelines and jobs need `X-API-Key` when MEDIAFLOW_API_KEY or
 * MEDIAFLOW_API_KEYS is set (any configured key); `/metrics` needs its own token
 * (`Authorization: Bearer`, what Prometheus sends) when MEDIAFLOW_METRICS_TOKEN is set, else an
 * API key (as `X-API-Key` or a Bearer token), else nothing. Each check runs when the request
 * arrives, before its body is read or parsed. With several keys, each key owns the jobs it submits.
 */

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time comparison of a credential with the configured secret. */
export const matches = (given: unknown, secret: string) =>
  typeof given === 'string' && timingSafeEqual(digest(given), digest(secret));

/** The token of an `Authorization: Bearer <token>` header. */
const bearer = (request: FastifyRequest) => /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];

/** Whether a credential matches one of the secrets; every one is compared, so the time does not tell which. */
const matchesAny = (given: unknown, secrets: readonly string[]) =>
  secrets.map((secret) => matches(given, secret)).includes(true);

/** The `onRequest` check of the routes behind the API key (its 401 text: docs/architecture.md, "Errors"). */
export function apiKeyCheck(config: Pick<Config, 'apiKey' | 'apiKeys'>) {
  const keys = apiKeysOf(config);
  return async (request: FastifyRequest) => {
    if (keys.length > 0 && !matchesAny(request.headers['x-api-key'], keys)) {
      throw new MediaflowError('MF_ERR_AUTH', 'Invalid or missing API key');
    }
  };
}

/**
 * Who owns what a request submits or reads: with several API keys, a SHA-256 of its key (checked
 * by `apiKeyCheck` first), so keys are never stored; with one key or none, nobody (all jobs shared).
 */
export function keyOwner(config: Pick<Config, 'apiKey' | 'apiKeys'>): (request: FastifyRequest) => string | undefined {
  const several = apiKeysOf(config).length > 1;
  return (request) => {
    const key = request.headers['x-api-key'];
    return several && typeof key === 'string' ? digest(key).toString('hex') : undefined;
  };
}

/** The `onRequest` check of `/metrics`: its token, else the API key, else open (one process on a private network). */
export function metricsCheck(config: Pick<Config, 'apiKey' | 'apiKeys' | 'metricsToken'>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const secrets = [...(config.metricsToken ? [config.metricsToken] : []), ...apiKeysOf(config)];
    if (secrets.length === 0) return;
    const given = [bearer(request), request.headers['x-api-key']];
    if (secrets.some((secret) => given.some((credential) => matches(credential, secret)))) return;
    void reply.header('www-authenticate', 'Bearer realm="mediaflow metrics"');
    throw new MediaflowError(
      'MF_ERR_AUTH',
      config.metricsToken
        ? 'Invalid or missing metrics token (Authorization: Bearer) or API key'
        : 'Invalid or missing API key',
    );
  };
}
