import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import { MediaflowError } from '../engine/errors.js';

/**
 * Who may call what: operations, pipelines and jobs need `X-API-Key` when MEDIAFLOW_API_KEY is
 * set; `/metrics` needs its own token (`Authorization: Bearer`, what Prometheus sends) when
 * MEDIAFLOW_METRICS_TOKEN is set, else the API key (as `X-API-Key` or a Bearer token), else
 * nothing. Each check runs when the request arrives, before its body is read or parsed.
 */

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time comparison of a credential with the configured secret. */
export const matches = (given: unknown, secret: string) => typeof given === 'string' && timingSafeEqual(digest(given), digest(secret));

/** The token of an `Authorization: Bearer <token>` header. */
const bearer = (request: FastifyRequest) => /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];

/** The `onRequest` check of the routes behind the API key (CONTRACT.md's 401 text). */
export function apiKeyCheck(config: Pick<Config, 'apiKey'>) {
  return async (request: FastifyRequest) => {
    if (config.apiKey && !matches(request.headers['x-api-key'], config.apiKey)) {
      throw new MediaflowError('MF_ERR_AUTH', 'Invalid or missing API key');
    }
  };
}

/** The `onRequest` check of `/metrics`: its token, else the API key, else open (one process on a private network). */
export function metricsCheck(config: Pick<Config, 'apiKey' | 'metricsToken'>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const secrets = [config.metricsToken, config.apiKey].filter((secret): secret is string => Boolean(secret));
    if (secrets.length === 0) return;
    const given = [bearer(request), request.headers['x-api-key']];
    if (secrets.some((secret) => given.some((credential) => matches(credential, secret)))) return;
    void reply.header('www-authenticate', 'Bearer realm="mediaflow metrics"');
    throw new MediaflowError('MF_ERR_AUTH', config.metricsToken ? 'Invalid or missing metrics token (Authorization: Bearer) or API key' : 'Invalid or missing API key');
  };
}
