import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from '../helpers/lifecycle.js';
import { loadConfig, parseSetting, SETTINGS } from '../../src/engine/config.js';

describe('loadConfig', () => {
  it('has the defaults of docs/configuration.md', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.allowPrivateUrls, false);
    assert.equal(config.maxQueue, 100);
    assert.equal(config.maxInputBytes, 1073741824);
    assert.equal(config.maxInputs, 50);
    assert.equal(config.downloadTimeoutMs, 120_000);
    assert.equal(config.jobTimeoutMs, 1_800_000);
    assert.equal(config.maxPixels, 100_000_000);
    assert.equal(config.retentionMs, 24 * 3600_000);
    assert.equal(config.bodyIdleTimeoutMs, 10_000);
    assert.equal(config.apiKey, undefined);
    assert.ok(config.concurrency >= 1);
  });

  it('reads booleans and durations as docs/configuration.md says, flags winning over the environment', () => {
    for (const on of ['1', 'true', 'yes', 'on', 'TRUE'])
      assert.equal(loadConfig({ MEDIAFLOW_ALLOW_PRIVATE_URLS: on }).allowPrivateUrls, true);
    for (const off of ['0', 'false', 'no', 'off'])
      assert.equal(loadConfig({ MEDIAFLOW_TRUST_PROXY: off }).trustProxy, false);
    assert.equal(loadConfig({ MEDIAFLOW_DOWNLOAD_TIMEOUT: '30' }).downloadTimeoutMs, 30_000);
    assert.equal(loadConfig({ MEDIAFLOW_JOB_TIMEOUT: '5m' }).jobTimeoutMs, 300_000);
    assert.equal(loadConfig({ MEDIAFLOW_RETENTION: '7d' }).retentionMs, 7 * 86_400_000);
    assert.equal(loadConfig({ MEDIAFLOW_RETENTION: '0' }).retentionMs, 0);
    assert.equal(loadConfig({ PORT: '9000' }, { port: '9100' }).port, 9100);
    assert.equal(loadConfig({ MEDIAFLOW_PUBLIC_URL: 'https://media.example/' }).publicUrl, 'https://media.example');
    assert.deepEqual(loadConfig({ MEDIAFLOW_ALLOWED_HOSTS: 'A.example, b.example,' }).allowedHosts, [
      'a.example',
      'b.example',
    ]);
  });

  it('refuses values it cannot read, naming the variable and the flag', () => {
    assert.throws(() => loadConfig({ PORT: 'eighty' }), /Expected PORT \(--port\) to be a whole number, got `eighty`/);
    assert.throws(
      () => loadConfig({ MEDIAFLOW_RETENTION: 'soon' }),
      /MEDIAFLOW_RETENTION \(--retention\) to be a duration/,
    );
    assert.throws(() => loadConfig({ MEDIAFLOW_ALLOW_PRIVATE_URLS: 'maybe' }), /MEDIAFLOW_ALLOW_PRIVATE_URLS/);
    assert.throws(() => loadConfig({ MEDIAFLOW_CONCURRENCY: '0' }), /at least 1/);
    assert.throws(
      () => loadConfig({ MEDIAFLOW_WHISPER_BINDING: 'gpu' }),
      /^MediaflowError: Expected MEDIAFLOW_WHISPER_BINDING \(--whisper-binding\) to be one of auto, fugood, napi, got `gpu`$/,
    );
  });

  it('holds each value to its range, saying the range and the value as a user writes them', () => {
    assert.throws(
      () => loadConfig({ MEDIAFLOW_HEADERS_TIMEOUT: '0.5' }),
      /^MediaflowError: Expected MEDIAFLOW_HEADERS_TIMEOUT \(--headers-timeout\) to be at least 1s, got `0.5s`$/,
    );
    assert.throws(
      () => loadConfig({ MEDIAFLOW_S3_URL_TTL: '8d' }),
      /^MediaflowError: Expected MEDIAFLOW_S3_URL_TTL \(--s3-url-ttl\) to be from 1s to 7d, got `691200s`$/,
    );
    assert.equal(loadConfig({ MEDIAFLOW_S3_URL_TTL: '7d' }).s3UrlTtlMs, 7 * 86_400_000);
    assert.throws(() => loadConfig({ MEDIAFLOW_WEBHOOK_ATTEMPTS: '00' }), /to be at least 1, got `0`$/);
  });

  it('makes folders absolute and URLs and origins end without a slash, defaults and given values alike', () => {
    const config = loadConfig({
      MEDIAFLOW_PIPELINES_DIR: 'flows',
      MEDIAFLOW_CORS_ORIGINS: 'HTTPS://App.example/, https://b.example',
      MEDIAFLOW_WHISPER_MODEL_URL: 'http://models.example/ggml//',
    });
    assert.equal(config.pipelinesDir, path.resolve('flows'));
    assert.equal(config.templatesDir, path.resolve(import.meta.dirname, '../../templates'));
    assert.deepEqual(config.corsOrigins, ['https://app.example', 'https://b.example']);
    assert.equal(config.whisperModelUrl, 'http://models.example/ggml');
  });

  it('shows each default in docs/configuration.md as a value the setting reads back to that default', () => {
    let shown = 0;
    for (const setting of SETTINGS) {
      if (setting.default === undefined || setting.shown !== undefined) continue;
      const written = (setting.kind as { show(value: unknown): string }).show(setting.default);
      const value = /^`([^`]*)`/.exec(written)?.[1] ?? (written === 'empty' ? '' : written);
      const read = value === 'unset' ? [] : parseSetting(setting, value);
      assert.deepEqual(read, setting.default, setting.env);
      shown++;
    }
    assert.ok(shown > 40, `${shown} defaults checked`);
  });

  it('takes the whisper.cpp binding to use: auto unless set', () => {
    assert.equal(loadConfig({}).whisperBinding, 'auto');
    assert.equal(loadConfig({ MEDIAFLOW_WHISPER_BINDING: 'napi' }).whisperBinding, 'napi');
    assert.equal(
      loadConfig({ MEDIAFLOW_WHISPER_BINDING: 'napi' }, { whisperBinding: 'fugood' }).whisperBinding,
      'fugood',
    );
  });
});
