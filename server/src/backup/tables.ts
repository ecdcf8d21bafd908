import type { Tx } from '../db.ts';

// The database as a backup sees it: every table of the schema, its key and the columns a row is
// written back with, in an order where each table comes after the tables it references. Read
// from the catalog, so that a table a migration adds is backed up without a line here.

export interface TableShape {
  name: string;
  /** The primary key's columns: rows are read in this order, a page after the last key. */
  key: string[];
  /** Their types, which the last key of a page is given back as (it travels as text). */
  keyTypes: string[];
  /** The columns a restore writes: all but generated ones. */
  columns: string[];
  /** The identity column, whose sequence a restore moves past the largest value. */
  identity: string | null;
}

/** Never restored from a backup: the target's migrations write it. */
export const MIGRATIONS_TABLE = 'schema_migrations';

export async function tableShapes(sql: Tx): Promise<TableShape[]> {
  const tables = await sql<TableShape[]>`
    select c.relname as name,
      array(
        select a.attname from pg_index i cross join lateral unnest(i.indkey) with ordinality as k(attnum, position)
        join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
        where i.indrelid = c.oid and i.indisprimary order by k.position
      )::text[] as key,
      array(
        select format_type(a.atttypid, a.atttypmod) from pg_index i cross join lateral unnest(i.indkey) with ordinality as k(attnum, position)
        join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
        where i.indrelid = c.oid and i.indisprimary order by k.position
      )::text[] as "keyTypes",
      array(
        select a.attname from pg_attribute a
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = '' order by a.attnum
      )::text[] as columns,
      (select a.attname from pg_attribute a where a.attrelid = c.oid and a.attidentity <> '' and not a.attisdropped limit 1)::text as identity
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition and c.relname <> ${MIGRATIONS_TABLE}
    order by c.relname`;
  const references = await sql<{ child: string; parent: string }[]>`
    select child.relname as child, parent.relname as parent
    from pg_constraint f
    join pg_class child on child.oid = f.conrelid
    join pg_class parent on parent.oid = f.confrelid
    join pg_namespace n on n.oid = child.relnamespace
    where f.contype = 'f' and n.nspname = current_schema() and child.oid <> parent.oid`;
  for (const table of tables) if (table.key.length === 0) throw new Error(`table ${table.name} has no primary key: a backup reads every table by its key`);
  return referencedFirst(tables, references);
}

/** Tables ordered so that each follows every table it references (a table referencing itself orders its own rows by key). */
function referencedFirst(tables: TableShape[], references: { child: string; parent: string }[]): TableShape[] {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const ordered: TableShape[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new Error(`tables reference each other in a cycle through ${name}`);
    state.set(name, 'visiting');
    for (const reference of references) if (reference.child === name && byName.has(reference.parent)) visit(reference.parent);
    state.set(name, 'done');
    const table = byName.get(name);
    if (table) ordered.push(table);
  };
  for (const table of tables) visit(table.name);
  return ordered;
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

// A key travels as text and back through the type's own input, except bytea: text becomes bytea
// byte for byte (the characters of its \\x… form), so bytea keys travel as hex.
const keyAsText = (column: string, type: string) => (type === 'bytea' ? `encode(${column}, 'hex')` : `${column}::text`);
const keyParameter = (type: string, n: number) => (type === 'bytea' ? `decode($${n}::text, 'hex')` : `$${n}::text::${type}`);

/** One page of a table's rows as JSON text, after the row whose key is `after` (from the start when null), but those `except` picks. */
export async function pageOfRows(
  tx: Tx,
  table: TableShape,
  after: string[] | null,
  limit: number,
  except: string | null = null,
): Promise<{ rows: string[]; last: string[] | null }> {
  const key = table.key.map(quoted).join(', ');
  const conditions = [
    ...(after ? [`(${key}) > (${table.keyTypes.map((type, i) => keyParameter(type, i + 1)).join(', ')})`] : []),
    ...(except ? [`not (${except})`] : []),
  ];
  const where = conditions.length > 0 ? `where ${conditions.join(' and ')}` : '';
  const rows = await tx.unsafe<({ row: string } & Record<string, string>)[]>(
    `select row_to_json(t)::text as row, ${table.key.map((column, i) => `${keyAsText(`t.${quoted(column)}`, table.keyTypes[i] as string)} as k${i}`).join(', ')} from ${quoted(table.name)} t ${where} order by ${key} limit ${limit}`,
    after ?? [],
  );
  const lastRow = rows.at(-1);
  return { rows: rows.map((r) => r.row), last: lastRow ? table.key.map((_, i) => lastRow[`k${i}`] as string) : null };
}

/** A page of rows (a JSON array of the rows' JSON) into a table, each column converted back from JSON by PostgreSQL itself. */
export async function insertRows(tx: Tx, table: TableShape, page: string): Promise<number> {
  const columns = table.columns.map(quoted).join(', ');
  const inserted = await tx.unsafe(
    `insert into ${quoted(table.name)} (${columns}) ${table.identity ? 'overriding system value' : ''}
     select ${columns} from json_populate_recordset(null::${quoted(table.name)}, $1::text::json)`,
    [page],
  );
  return inserted.count;
}

/** Moves a table's identity sequence past the largest value restored, so that new rows get new ids. */
export async function advanceIdentity(tx: Tx, table: TableShape): Promise<void> {
  if (!table.identity) return;
  await tx.unsafe(`select setval(pg_get_serial_sequence($1, $2), coalesce((select max(${quoted(table.identity)}) from ${quoted(table.name)}), 0) + 1, false)`, [
    quoted(table.name),
    table.identity,
  ]);
}
