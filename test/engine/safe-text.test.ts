import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { publicText, withoutUserinfo } from '../../src/engine/safe-text.js';
import { describe, it } from '../helpers/lifecycle.js';

describe('what an error may show a client (publicText)', () => {
  it("removes a URL's credentials, up to the last @ of its authority", () => {
    assert.equal(
      publicText('Failed to download https://user:secret@models.example/ggml-base.bin: HTTP 404'),
      'Failed to download https://models.example/ggml-base.bin: HTTP 404',
    );
    assert.equal(
      withoutUserinfo("URL 'http://u:p@ss@10.0.0.1:8080/x@y' is not allowed"),
      "URL 'http://10.0.0.1:8080/x@y' is not allowed",
    );
    assert.equal(publicText('redis://:hunter2@cache:6379 is away'), 'redis://cache:6379 is away');
    // An @ after the host is the path's.
    assert.equal(publicText('http://example.com/@name/clip.mp4'), 'http://example.com/@name/clip.mp4');
  });

  it('cuts a path of the server to its last name, leaving URLs and routes', () => {
    const file = path.join(os.tmpdir(), 'mediaflow-data', 'models', 'ggml-tiny.en.bin');
    assert.equal(publicText(`${file} is not the published one`), 'ggml-tiny.en.bin is not the published one');
    assert.equal(publicText(`cannot open '${file}': ENOENT`), "cannot open 'ggml-tiny.en.bin': ENOENT");
    assert.equal(publicText(`(${path.dirname(file)}/)`), '(models)');
    for (const kept of [
      'Not found: GET /jobs/3f0c7a52/events',
      'http://127.0.0.1:8000/uploads/4b6e_input_video.mp4',
      `file://${file}`,
      '`/transcribe/` needs a model',
    ])
      assert.equal(publicText(kept), kept);
  });
});
