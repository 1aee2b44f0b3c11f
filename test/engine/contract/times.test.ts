import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import { paramRejection } from '../../helpers/param-rejection.js';
import { MediaflowError } from '../../../src/engine/errors.js';
import { parseParams } from '../../../src/engine/plugins/params.js';
import { Optional, Param, Type } from '../../../src/engine/contract/plugin.js';
import { sampleParams, schemaProblem } from '../../../src/engine/plugins/plugin-check.js';
import { timeWithin } from '../../../src/engine/contract/times.js';

const schema = Type.Object({
  start: Param.time({ default: 0, description: 'Where to start' }),
  end: Optional(Param.time({ description: 'Where to end' })),
  at: Optional(Param.times('Where to take frames')),
  remove: Optional(Param.ranges('What to take out')),
});

const rejection = (raw: Record<string, unknown>) => paramRejection(schema, raw);

describe('time parameters', () => {
  it('reads seconds and [HH:]MM:SS[.mmm] as seconds, and a default as a time', () => {
    const cases: Array<[unknown, number]> = [
      ['12.5', 12.5],
      [12.5, 12.5],
      ['.5', 0.5],
      ['7', 7],
      [' 01:02:03.5 ', 3723.5],
      ['00:01:30', 90],
      ['1:05', 65],
      ['75:30', 4530],
      ['00:00:00.040', 0.04],
    ];
    for (const [end, seconds] of cases) assert.deepEqual(parseParams(schema, { end }), { start: 0, end: seconds });
  });

  it('refuses what is not a time with a 400 naming the field and the form', () => {
    for (const bad of ['-1', 'ten', '1:60', '1:02:60', '01:60:00', '1e3', '12.5s', '::', 'Infinity', '1:2:3:4']) {
      assert.equal(
        rejection({ end: bad }),
        `Expected \`end\` to be a time, seconds (12.5) or [HH:]MM:SS[.mmm] (01:02:03.5), got \`${bad}\``,
      );
    }
  });

  it('reads a comma-separated list of times in the order given', () => {
    assert.deepEqual(parseParams(schema, { at: '10, 00:00:05,,1:00.25' }).at, [10, 5, 60.25]);
    assert.match(rejection({ at: '10,x' }), /^Expected each item of `at` to be a time, .*, got `x`$/);
  });

  it('reads ranges as { start, end }, each ending after it starts', () => {
    assert.deepEqual(parseParams(schema, { remove: '10-20.5, 00:01:00-00:01:30' }).remove, [
      { start: 10, end: 20.5 },
      { start: 60, end: 90 },
    ]);
    for (const bad of ['10', '10-', '-5', '1-2-3', 'a-b']) {
      assert.match(
        rejection({ remove: bad }),
        new RegExp(`^Expected each item of \`remove\` to be a range <start>-<end> of times, .*, got \`${bad}\`$`),
      );
    }
    assert.equal(rejection({ remove: '20-10' }), 'Expected the range `20-10` of `remove` to end after it starts');
    assert.equal(rejection({ remove: '5-5' }), 'Expected the range `5-5` of `remove` to end after it starts');
  });

  it('has schemas the registry accepts, with samples of the form', () => {
    assert.equal(schemaProblem(schema), undefined);
    assert.deepEqual(sampleParams(schema), { start: '0', end: '10', at: '10,20', remove: '10-20.5' });
    assert.match(
      schemaProblem(Type.Object({ t: Type.String({ description: 't', 'x-mediaflow-time': 'clock' }) })) ?? '',
      /parameter 't' has x-mediaflow-time 'clock'/,
    );
  });
});

describe('timeWithin', () => {
  const facts = { formatName: 'mov,mp4,m4a,3gp,3g2,mj2', isImage: false, duration: 10.0333 };

  it('passes a time within the input, and its end itself', () => {
    assert.equal(timeWithin('start', 4, facts), 4);
    assert.equal(timeWithin('end', 10.0333, facts), 10.0333);
    assert.equal(timeWithin('end', 99, { ...facts, duration: undefined }), 99);
  });

  it('refuses a time past the end with a 400 naming the field and the duration', () => {
    assert.throws(
      () => timeWithin('start', 12.5, facts),
      (error: unknown) =>
        error instanceof MediaflowError &&
        error.status === 400 &&
        error.message === '`start` is 12.5 s, past the end of the input, which lasts 10.033 s',
    );
  });
});
