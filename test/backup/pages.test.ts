import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows, pageOfRows, tableShapes } from '../../server/src/backup/tables.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

// A backup reads each table a page at a time, after the last key of the page before: every key
// type must come back as itself, or a page repeats (and the backup never ends) or rows are skipped.

let db: TestDatabase;
const suffix = randomBytes(4).toString('hex');
const table = `backup_pages_${suffix}`;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.unsafe(`create table ${table} (hash bytea, at timestamptz, n bigint, label text, body jsonb, primary key (hash, at, n))`);
  const rows = Array.from({ length: 2500 }, (_, i) => ({
    hash: randomBytes(8),
    at: new Date(Date.UTC(2026, 0, 1) + (i % 7) * 1000 + 0.5),
    n: i,
    label: `row ${i} \\ "quoted"`,
    body: { i, list: [i, 'x'] },
  }));
  for (let i = 0; i < rows.length; i += 500) await db.sql`insert into ${db.sql(table)} ${db.sql(rows.slice(i, i + 500))}`;
});

afterAll(async () => {
  await db.sql.unsafe(`drop table if exists ${table}, ${table}_copy`);
  await db.drop();
});

describe('pages of a table', () => {
  it('when a table keyed by bytea, a timestamp and a number is read in pages, then every row comes once, and written back they are the same rows', async () => {
    const shape = (await tableShapes(db.sql)).find((s) => s.name === table);
    expect(shape).toMatchObject({ key: ['hash', 'at', 'n'], keyTypes: ['bytea', 'timestamp with time zone', 'bigint'] });
    const pages: string[][] = [];
    let after: string[] | null = null;
    for (;;) {
      const page = await pageOfRows(db.sql, shape as NonNullable<typeof shape>, after, 300);
      if (page.rows.length === 0) break;
      pages.push(page.rows);
      after = page.last;
    }
    const rows = pages.flat();
    expect(pages.length).toBe(9);
    expect(new Set(rows).size).toBe(2500);

    await db.sql.unsafe(`create table ${table}_copy (like ${table} including all)`);
    const copy = { ...(shape as NonNullable<typeof shape>), name: `${table}_copy` };
    for (const page of pages) await insertRows(db.sql, copy, `[${page.join(',')}]`);
    const differing = await db.sql.unsafe(
      `(select * from ${table} except select * from ${table}_copy) union all (select * from ${table}_copy except select * from ${table})`,
    );
    expect(differing.length).toBe(0);
  });
});
