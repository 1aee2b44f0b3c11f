/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret format, the v1
 * signature and the headers every delivery carries.
 */
import { createHmac } from 'node:crypto';
import { MediaflowError } from '../../engine/errors.js';

const PREFIX = 'whsec_';
// Standard base64 (not base64url), padding optional; Buffer.from alone would skip bad characters silently.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** Decodes a `whsec_<base64>` secret into its key bytes; throws MF_ERR_PARAM when malformed. */
export function parseWebhookSecret(secret: string): Buffer {
  // The message never repeats the value: it is a secret, and it ends up in logs.
  const invalid = (got: string) =>
    new MediaflowError(
      'MF_ERR_PARAM',
      `Expected \`MEDIAFLOW_WEBHOOK_SECRET\` to be \`whsec_\` followed by base64 (as Standard Webhooks ` +
        `secrets are), got ${got}`,
    );
  const value = secret.trim();
  if (!value.startsWith(PREFIX)) throw invalid('a value without the `whsec_` prefix');
  const encoded = value.slice(PREFIX.length);
  if (encoded === '') throw invalid('nothing after `whsec_`');
  if (!BASE64.test(encoded)) throw invalid('characters after `whsec_` that are not base64');
  return Buffer.from(encoded, 'base64');
}

/** The `webhook-signature` value: `v1,` and the base64 HMAC-SHA256 of `<msgId>.<timestamp>.<body>`. */
export function signWebhook(key: Buffer, msgId: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/**
 * The headers of one delivery attempt. The id stays the same on every attempt (receivers drop
 * repeats by it); the timestamp, and so the signature, are fresh each time, because receivers
 * refuse timestamps more than a few minutes old and retries come hours later.
 */
export function webhookHeaders(
  key: Buffer | undefined,
  msgId: string,
  body: string,
  now = Date.now(),
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'mediaflow-webhooks',
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
  };
  if (key) headers['webhook-signature'] = signWebhook(key, msgId, timestamp, body);
  return headers;
}
