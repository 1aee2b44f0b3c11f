import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import { paramRejection } from '../../helpers/param-rejection.js';
import { MediaflowError } from '../../../src/engine/errors.js';
import { parseParams, splitList } from '../../../src/engine/plugins/params.js';
import { Optional, Param, Type } from '../../../src/engine/contract/plugin.js';

const schema = Type.Object({
  urls: Param.urlList('audio', 'inputs', { min: 2, tooFew: 'At least two audio URLs are required' }),
  format: Param.format(['mp3', 'wav'], { default: 'mp3', description: 'format' }),
  mode: Param.choice(['fast', 'small'], { default: 'fast', description: 'mode' }),
  width: Param.integer({ minimum: 1, maximum: 8192, description: 'width' }),
  fps: Optional(Param.integer({ minimum: 1, maximum: 60, description: 'fps' })),
  text: Optional(Param.text({ maxLength: 10, description: 'text' })),
});

const rejection = (raw: Record<string, unknown>) => paramRejection(schema, raw);

describe('parseParams', () => {
  it('coerces form strings, fills defaults and ignores unknown fields', () => {
    const params = parseParams(schema, { urls: ' http://a/x.mp3 , ,http://b/y.mp3,', width: '640', extra: 'ignored' });
    assert.deepEqual(params, { urls: ['http://a/x.mp3', 'http://b/y.mp3'], format: 'mp3', mode: 'fast', width: 640 });
  });

  it('accepts JSON numbers, repeated fields and formats in any case', () => {
    const params = parseParams(schema, { urls: ['http://a/1', 'http://a/2'], width: 12, format: 'WAV', fps: '+30' });
    assert.deepEqual(params, { urls: ['http://a/1', 'http://a/2'], format: 'wav', mode: 'fast', width: 12, fps: 30 });
  });

  it('names the parameter and the problem', () => {
    const urls = 'http://a/1,http://a/2';
    assert.equal(rejection({ urls }), 'Missing required parameter `width`');
    assert.equal(rejection({ urls, width: 'abc' }), 'Expected `width` to be an integer from 1 to 8192, got `abc`');
    assert.equal(rejection({ urls, width: '0' }), 'Expected `width` to be an integer from 1 to 8192, got `0`');
    assert.equal(rejection({ urls, width: '8193' }), 'Expected `width` to be an integer from 1 to 8192, got `8193`');
    assert.equal(rejection({ urls, width: '1.5' }), 'Expected `width` to be an integer from 1 to 8192, got `1.5`');
    assert.equal(rejection({ urls, width: '1e3' }), 'Expected `width` to be an integer from 1 to 8192, got `1e3`');
    assert.equal(rejection({ urls, width: '5', mode: 'slow' }), 'Expected `mode` to be one of fast, small, got `slow`');
    assert.equal(
      rejection({ urls, width: '5', text: 'x'.repeat(11) }),
      'Expected `text` to be at most 10 characters, got 11',
    );
  });

  it('uses the contract texts for formats and short lists', () => {
    assert.equal(rejection({ urls: 'http://a/1', width: '5' }), 'At least two audio URLs are required');
    assert.equal(rejection({ urls: ' , ', width: '5' }), 'At least two audio URLs are required');
    assert.equal(
      rejection({ urls: 'http://a/1,http://a/2', width: '5', format: 'mp4 -i /etc/passwd' }),
      "Unsupported format 'mp4 -i /etc/passwd'. Supported formats: mp3, wav.",
    );
    assert.equal(
      rejection({ urls: 'http://a/1,http://a/2', width: '5', format: '../../x' }),
      "Unsupported format '../../x'. Supported formats: mp3, wav.",
    );
  });

  it('takes a list of times or ranges as a JSON list (or a repeated field) too, and one time only once', () => {
    const schema = Type.Object({
      at: Param.times('When'),
      remove: Optional(Param.ranges('What')),
      start: Optional(Param.time({ description: 'From' })),
    });
    assert.deepEqual(parseParams(schema, { at: [1.5, '00:03'], remove: ['1-2', '4-5.5'] }), {
      at: [1.5, 3],
      remove: [
        { start: 1, end: 2 },
        { start: 4, end: 5.5 },
      ],
    });
    assert.throws(
      () => parseParams(schema, { at: '1', start: [1, 2] }),
      /Expected `start` to be one value, got 2 \(the field was sent more than once, or as a list\)/,
    );
  });

  it('splits lists on commas, trimming and dropping empty items', () => {
    assert.deepEqual(splitList(' a, b ,,c , '), ['a', 'b', 'c']);
    assert.deepEqual(splitList(''), []);
  });

  it('reads a document as an object or its JSON text, and named values from every form field but its own', () => {
    const withDocument = Type.Object({
      doc: Optional(Param.document(Type.Object({ a: Type.Number() }), { description: 'A document' })),
      names: Optional(Param.values({ description: 'Names' })),
      mode: Param.choice(['fast', 'small'], { default: 'fast', description: 'mode' }),
    });
    const read = (raw: Record<string, unknown>) => parseParams(withDocument, raw);
    // Unchecked inside: the plugin checks a document itself, to tell every problem with its path.
    assert.deepEqual(read({ doc: { a: 'x' } }), { doc: { a: 'x' }, names: {}, mode: 'fast' });
    assert.deepEqual(read({ doc: '{"a": 1}', TITLE: 'Hi', N: 3, mode: 'small', nested: { x: 1 } }), {
      doc: { a: 1 },
      names: { TITLE: 'Hi', N: '3' },
      mode: 'small',
    });
    // The parameter's own values win over the form's other fields; NAME=value items are the CLI's repeated flag.
    assert.deepEqual(read({ names: { TITLE: 'Own' }, TITLE: 'Field' }).names, { TITLE: 'Own' });
    assert.deepEqual(read({ names: ['A=1', 'B=x=y'] }).names, { A: '1', B: 'x=y' });
    assert.deepEqual(read({ names: '{"A": "1"}' }).names, { A: '1' });
    const refused = (raw: Record<string, unknown>) =>
      assert.throws(
        () => read(raw),
        (error: MediaflowError) => error.status === 400 && Boolean(error.message),
      );
    refused({ doc: '{"a": ' });
    refused({ doc: '[1]' });
    refused({ doc: [{ a: 1 }, { a: 2 }] });
    refused({ names: ['no equals sign'] });
    refused({ TITLE: ['sent', 'twice'] });
    assert.throws(
      () => read({ doc: 'nope' }),
      /^MediaflowError: Expected `doc` to be a JSON object, but it is not valid JSON/,
    );
    assert.throws(() => read({ doc: '"text"' }), /Expected `doc` to be a JSON object, got a string/);
    assert.throws(
      () => read({ TITLE: ['a', 'b'] }),
      /Expected the value `TITLE` of `names` to be one text, got 2 values \(the field was sent more than once\)/,
    );
  });
});
