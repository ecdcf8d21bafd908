import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdSet } from '../../server/src/junit/attempts.ts';

const id = (n: number) => {
  const hex = createHash('sha256').update(String(n)).digest('hex');
  return `${hex.slice(0, 20)}-${hex.slice(20, 40)}`;
};

describe('the ids of a file’s tests, kept off the heap', () => {
  it('when 200,000 ids are added and each again, then each is new once and known after, across every growth', () => {
    const ids = new IdSet();
    let fresh = 0;
    for (let n = 0; n < 200_000; n++) if (ids.add(id(n))) fresh++;
    expect(fresh).toBe(200_000);
    let again = 0;
    for (let n = 0; n < 200_000; n++) if (!ids.add(id(n))) again++;
    expect(again).toBe(200_000);
    expect(ids.add(id(200_000))).toBe(true);
  });
});
