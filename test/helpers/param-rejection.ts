import assert from 'node:assert/strict';
import type { TObject } from '@sinclair/typebox';
import { MediaflowError } from '../../src/engine/errors.js';
import { parseParams } from '../../src/engine/plugins/params.js';

/** The 400 message parseParams throws for `raw` against `schema`; fails when it accepts them. */
export function paramRejection(schema: TObject, raw: Record<string, unknown>): string {
  try {
    parseParams(schema, raw);
  } catch (error) {
    assert.ok(error instanceof MediaflowError);
    assert.equal(error.status, 400);
    return error.message;
  }
  assert.fail('expected a 400');
}
