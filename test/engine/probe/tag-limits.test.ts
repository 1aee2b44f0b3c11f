import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import { cappedTags, TAG_TOTAL_BYTES, TAG_VALUE_BYTES } from '../../../src/engine/probe/tag-limits.js';

const bytes = (text: string) => Buffer.byteLength(text);

describe('the limits on tags (issue 33)', () => {
  it('keeps tags within the limits as they are, unmarked', () => {
    const tags = { title: 'Sóng', comment: 'x'.repeat(TAG_VALUE_BYTES) };
    assert.deepEqual(cappedTags(tags), { tags, truncated: false });
  });

  it('cuts a value between characters, never inside one, and marks it', () => {
    // A 4-byte emoji (two UTF-16 units) straddles the limit: it goes whole.
    const value = `${'a'.repeat(TAG_VALUE_BYTES - 2)}😀${'b'.repeat(100)}`;
    const { tags, truncated } = cappedTags({ lyrics: value });
    assert.equal(truncated, true);
    assert.equal(tags.lyrics, 'a'.repeat(TAG_VALUE_BYTES - 2));
    // Three-byte characters: as many whole ones as fit.
    const cut = cappedTags({ lyrics: '€'.repeat(TAG_VALUE_BYTES) }).tags.lyrics!;
    assert.equal(cut, '€'.repeat(Math.floor(TAG_VALUE_BYTES / 3)));
  });

  it('keeps names and values within the total, in order: the one past it cut, the rest left out', () => {
    const tags = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`n${i}`, 'v'.repeat(10_000)]));
    const capped = cappedTags(tags);
    assert.equal(capped.truncated, true);
    const kept = Object.entries(capped.tags);
    const total = kept.reduce((sum, [name, value]) => sum + bytes(name) + bytes(value), 0);
    assert.equal(total, TAG_TOTAL_BYTES);
    assert.deepEqual(
      kept.map(([name, value]) => [name, value.length]),
      [...Array.from({ length: 6 }, (_, i) => [`n${i}`, 10_000]), ['n6', TAG_TOTAL_BYTES - 6 * 10_002 - 2]],
    );
    // A name longer than a value may be is left out, however much room there is.
    assert.deepEqual(cappedTags({ ['k'.repeat(TAG_VALUE_BYTES + 1)]: 'v', title: 'T' }), {
      tags: { title: 'T' },
      truncated: true,
    });
  });
});
