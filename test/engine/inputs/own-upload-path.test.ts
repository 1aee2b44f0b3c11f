import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import { MediaflowError } from '../../../src/engine/errors.js';
import { ownUploadPath } from '../../../src/engine/inputs/own-uploads.js';

// Nothing here sends a packet: ownUploadPath only parses strings.
const BASES = ['http://127.0.0.1:8123'] as const;
const OWN = 'http://127.0.0.1:8123/uploads/';
const ID = '0f8c2a6e-7a1b-4c3d-9e8f-112233445566';

/** The refusal ownUploadPath throws for `source`: always a 400 MediaflowError with code MF_ERR_URL. */
function refusal(source: string, bases: readonly string[] = BASES): string {
  let result: string | undefined;
  try {
    result = ownUploadPath(source, bases);
  } catch (error) {
    assert.ok(error instanceof MediaflowError, `${source}: ${String(error)}`);
    assert.equal(error.status, 400, source);
    assert.equal(error.code, 'MF_ERR_URL', source);
    assert.ok(error.message.includes(source), `the message names the URL: ${error.message}`);
    return error.message;
  }
  assert.fail(`${source} should be refused, it mapped to ${String(result)}`);
}

describe('ownUploadPath', () => {
  it('maps one- and two-segment outputs to their store paths', () => {
    assert.equal(ownUploadPath(`${OWN}${ID}_merged.mp4`, BASES), `${ID}_merged.mp4`);
    assert.equal(ownUploadPath(`${OWN}${ID}/generated_subtitles.srt`, BASES), `${ID}/generated_subtitles.srt`);
    assert.equal(
      ownUploadPath(`${OWN}${ID}/merged_output.mp3`, ['http://127.0.0.1:8123/']),
      `${ID}/merged_output.mp3`,
      'a trailing slash on the base',
    );
  });

  it('decodes percent-encoded names', () => {
    assert.equal(ownUploadPath(`${OWN}${ID}/my%20clip%20(1).mp4`, BASES), `${ID}/my clip (1).mp4`);
    assert.equal(ownUploadPath(`${OWN}caf%C3%A9.mp3`, BASES), 'café.mp3');
    // A doubly encoded dot stays a literal '%2e' in the name: decoded once, never twice.
    assert.equal(ownUploadPath(`${OWN}${ID}/%252e%252e`, BASES), `${ID}/%2e%2e`);
  });

  it('works with a base that has a path prefix', () => {
    const bases = ['https://media.example/api'];
    assert.equal(ownUploadPath(`https://media.example/api/uploads/${ID}/out.mp4`, bases), `${ID}/out.mp4`);
    assert.equal(ownUploadPath(`https://media.example/api/uploads/${ID}_x.jpg`, bases), `${ID}_x.jpg`);
    // The same host without the prefix is not this server's uploads: fetched like any URL.
    assert.equal(ownUploadPath(`https://media.example/uploads/${ID}/out.mp4`, bases), undefined);
    assert.equal(ownUploadPath(`https://media.example/apix/uploads/${ID}/out.mp4`, bases), undefined);
    assert.match(refusal(`https://media.example/api/uploads/../x.mp4`, bases), /not a published output/);
  });

  it('takes any of several bases', () => {
    const bases = ['http://media.test', 'http://127.0.0.1:8123'];
    assert.equal(ownUploadPath(`http://media.test/uploads/${ID}_a.mp4`, bases), `${ID}_a.mp4`);
    assert.equal(ownUploadPath(`${OWN}${ID}_a.mp4`, bases), `${ID}_a.mp4`);
    assert.equal(ownUploadPath(`${OWN}${ID}_a.mp4`, []), undefined);
  });

  it('leaves other origins, ports, schemes and prefixes alone (undefined)', () => {
    for (const source of [
      `http://127.0.0.1:8124/uploads/${ID}_a.mp4`,
      `http://127.0.0.1/uploads/${ID}_a.mp4`,
      `https://127.0.0.1:8123/uploads/${ID}_a.mp4`,
      `http://localhost:8123/uploads/${ID}_a.mp4`,
      `http://127.0.0.2:8123/uploads/${ID}_a.mp4`,
      `http://files.example/uploads/${ID}_a.mp4`,
      `http://127.0.0.1:8123/f/${ID}_a.mp4`,
      `http://127.0.0.1:8123/uploadsx/${ID}_a.mp4`,
      `http://127.0.0.1:8123/uploads`,
      `http://127.0.0.1:8123/x/uploads/${ID}_a.mp4`,
      'not a url',
      '/uploads/x.mp4',
    ]) {
      assert.equal(ownUploadPath(source, BASES), undefined, source);
    }
  });

  it('refuses dot segments, plain and percent-encoded in any case', () => {
    for (const tail of [
      '../',
      '../etc/passwd',
      'a/../../etc/passwd',
      `${ID}/../x.mp4`,
      './x.mp4',
      `${ID}/.`,
      '..',
      '%2e%2e/',
      '%2e%2e/etc/passwd',
      '%2E%2E%2F',
      '%2E%2E%2Fetc%2Fpasswd',
      '..%2f',
      '..%2F..%2Fetc%2Fpasswd',
      '%2e./x',
      '.%2E/x',
      `${ID}%2fx.mp4`,
    ]) {
      refusal(`${OWN}${tail}`);
    }
    // The whole path spelled out, also through the prefix itself.
    refusal('http://127.0.0.1:8123/uploads/a/../../etc/passwd');
    refusal('http://127.0.0.1:8123/uploads/../uploads/x.mp4');
    refusal('http://127.0.0.1:8123/uploads/%2e%2e/%2e%2e/etc/passwd');
  });

  it('refuses backslashes, literal and encoded', () => {
    refusal(`${OWN}..%5c..%5cetc%5cpasswd`);
    refusal(`${OWN}${ID}%5Cx.mp4`);
    refusal(`${OWN}..\\..\\etc\\passwd`);
    refusal(`${OWN}${ID}\\x.mp4`);
    // WHATWG parsing turns a backslash into a slash in http URLs, also right after the authority.
    refusal('http://127.0.0.1:8123\\uploads\\x.mp4');
    refusal('http://127.0.0.1:8123\\uploads\\a\\..\\b.mp4');
  });

  it('refuses files being written (.partial-) and other dotfiles', () => {
    refusal(`${OWN}.partial-xyz`);
    refusal(`${OWN}${ID}/.partial-0b1c2d3e`);
    refusal(`${OWN}%2Epartial-xyz`);
    refusal(`${OWN}.env`);
    refusal(`${OWN}${ID}/.hidden.mp4`);
    refusal(`${OWN}.${ID}/out.mp4`);
  });

  it('refuses three segments, empty segments, NUL, a query or a fragment', () => {
    assert.match(refusal(`${OWN}a/b/c.mp4`), /not a published output/);
    refusal(`${OWN}${ID}/x/out.mp4`);
    refusal(`${OWN}/x.mp4`);
    refusal(`${OWN}${ID}//x.mp4`);
    refusal(`${OWN}`);
    refusal(`${OWN}${ID}/`);
    refusal(`${OWN}x%00.mp4`);
    refusal(`${OWN}${ID}/out%E0%A4%A.mp4`);
    assert.match(refusal(`${OWN}${ID}_a.mp4?x=1`), /query or fragment/);
    assert.match(refusal(`${OWN}${ID}_a.mp4#frag`), /query or fragment/);
  });

  it('sees dot segments hidden by characters URL parsing strips (tab, newline)', () => {
    refusal(`${OWN}${ID}/.\t./x.mp4`);
    refusal(`${OWN}a/.\n./b`);
    refusal(`${OWN}.\t./.\t./etc/passwd`);
    // Leading and trailing spaces and control characters, which the parser trims, hide nothing either.
    refusal(` ${OWN}${ID}/../x.mp4`);
    refusal(`\u0001${OWN}${ID}/../x.mp4`);
    refusal(`${OWN}a/b/.. `);
    assert.equal(ownUploadPath(` ${OWN}${ID}_a.mp4 `, BASES), `${ID}_a.mp4`);
  });
});
