/**
 * describe/it and hooks that run under vitest and under Node's own test runner alike: vitest
 * when it is the runner, node:test otherwise. Assertions come from node:assert/strict in both.
 */
import * as nodeTest from 'node:test';

const underVitest = Boolean(process.env.VITEST);
const vitest = underVitest ? await import('vitest') : undefined;

export const describe = (vitest?.describe ?? nodeTest.describe) as typeof nodeTest.describe;
export const it = (vitest?.it ?? nodeTest.it) as typeof nodeTest.it;
export const before = (vitest?.beforeAll ?? nodeTest.before) as (fn: () => unknown, timeout?: number) => void;
export const after = (vitest?.afterAll ?? nodeTest.after) as (fn: () => unknown, timeout?: number) => void;
export const beforeEach = (vitest?.beforeEach ?? nodeTest.beforeEach) as (fn: () => unknown) => void;
export const afterEach = (vitest?.afterEach ?? nodeTest.afterEach) as (fn: () => unknown) => void;
