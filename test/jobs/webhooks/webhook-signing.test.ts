import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, it } from '../../helpers/lifecycle.js';
import { MediaflowError } from '../../../src/engine/errors.js';
import { retryDelayMs } from '../../../src/jobs/webhooks/backoff.js';
import { parseWebhookSecret, signWebhook, webhookHeaders } from '../../../src/jobs/webhooks/signing.js';

const bytes = randomBytes(32);
const secret = `whsec_${bytes.toString('base64')}`;
// Not ASCII on purpose: both sides must hash the body's UTF-8 bytes.
const body = JSON.stringify({
  job_id: '0b5c1e8e-2f1a-4d55-9d4e-3c7f0b6f1a2d',
  status: 'succeeded',
  metadata: 'café 🎬',
});

describe('webhook signing', () => {
  it('decodes a whsec_ secret into its key bytes', () => {
    assert.deepEqual(parseWebhookSecret(secret), bytes);
    assert.deepEqual(parseWebhookSecret(`${secret}\n`), bytes, 'a trailing newline from a secrets file is tolerated');
    assert.deepEqual(parseWebhookSecret('whsec_AQID'), Buffer.from([1, 2, 3]));
  });

  it('refuses malformed secrets with a message that names the variable but not the value', () => {
    for (const bad of [
      '',
      'whsec_',
      bytes.toString('base64'),
      'WHSEC_AQID',
      'whsec_not*base64!',
      'whsec_AQ-_',
      'whsec_AQIDB',
      'whsec_AQ=D',
    ]) {
      assert.throws(
        () => parseWebhookSecret(bad),
        (error: unknown) => {
          assert.ok(error instanceof MediaflowError, bad);
          assert.equal(error.code, 'MF_ERR_PARAM');
          assert.match(error.message, /MEDIAFLOW_WEBHOOK_SECRET/);
          if (bad.length > 8)
            assert.ok(!error.message.includes(bad.replace(/^whsec_/i, '')), `the secret leaked: ${error.message}`);
          return true;
        },
        `'${bad}' should be refused`,
      );
    }
  });

  it('signs deliveries that the standardwebhooks package verifies', () => {
    const headers = webhookHeaders(parseWebhookSecret(secret), 'msg_1', body);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(
      () => new Webhook(secret).verify(body.replace('succeeded', 'failed'), headers),
      /No matching signature/,
    );
    assert.throws(
      () => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(body, headers),
      /No matching signature/,
    );
  });

  it('computes the same v1 signature as the reference for a fixed timestamp', () => {
    const timestamp = 1_700_000_000;
    assert.equal(
      signWebhook(bytes, 'msg_2', timestamp, body),
      new Webhook(secret).sign('msg_2', new Date(timestamp * 1000), body),
    );
    assert.match(signWebhook(bytes, 'msg_2', timestamp, body), /^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('sends whole-second timestamps, and the id without a signature when there is no secret', () => {
    const now = 1_700_000_000_999;
    const signed = webhookHeaders(bytes, 'msg_3', body, now);
    assert.deepEqual(signed, {
      'content-type': 'application/json',
      'user-agent': 'mediaflow-webhooks',
      'webhook-id': 'msg_3',
      'webhook-timestamp': '1700000000',
      'webhook-signature': signWebhook(bytes, 'msg_3', 1_700_000_000, body),
    });
    assert.deepEqual(webhookHeaders(undefined, 'msg_3', body, now), {
      'content-type': 'application/json',
      'user-agent': 'mediaflow-webhooks',
      'webhook-id': 'msg_3',
      'webhook-timestamp': '1700000000',
    });
  });
});

describe('webhook back-off', () => {
  const base = 5 * 60_000;

  it('doubles the delay after each failure, about ten hours over the default 8 attempts', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((failed) => retryDelayMs(failed, base, () => 0.5));
    assert.deepEqual(
      delays,
      [1, 2, 4, 8, 16, 32, 64].map((factor) => factor * base),
    );
    const hours = delays.reduce((sum, delay) => sum + delay, 0) / 3_600_000;
    assert.ok(hours > 10 && hours < 11, `${hours} h`);
  });

  it('jitters by at most 20%, and a later delay is never shorter than an earlier one', () => {
    assert.equal(
      retryDelayMs(1, base, () => 0),
      0.8 * base,
    );
    assert.equal(
      retryDelayMs(3, base, () => 0),
      0.8 * 4 * base,
    );
    const top = retryDelayMs(1, base, () => 0.999_999);
    assert.ok(top <= 1.2 * base && top > 1.19 * base, String(top));
    for (let failed = 1; failed < 7; failed++) {
      assert.ok(retryDelayMs(failed + 1, base, () => 0) > retryDelayMs(failed, base, () => 0.999_999));
    }
  });

  it('refuses a failure count below one', () => {
    assert.throws(() => retryDelayMs(0, base), RangeError);
    assert.throws(() => retryDelayMs(1.5, base), RangeError);
  });
});
