import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/architecture.md is where a newcomer learns the layout: it names every folder of the server,
// every top-level module, every package of the workspace, and the features in the order the layer
// check ranks them.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
const named = (name: string) => doc.includes(`\`${name}\``);

describe('docs/architecture.md', () => {
  it('when the folders and modules of server/src are listed, then it names each of them', () => {
    const entries = fs.readdirSync(path.join(ROOT, 'server/src'), { withFileTypes: true });
    const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => `${entry.name}/`);
    const modules = entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => entry.name);
    expect(folders.length).toBeGreaterThan(20);
    expect([...folders, ...modules].filter((name) => !named(name))).toEqual([]);
  });

  it("when the folders of reporter/src are listed, then the reporter package's sketch names each of them", () => {
    const entries = fs.readdirSync(path.join(ROOT, 'reporter/src'), { withFileTypes: true });
    const section = doc.split('## The reporter package')[1] ?? '';
    const sketch = /```\n(reporter\/src\/\n[\s\S]*?)```/.exec(section)?.[1] ?? '';
    const sketched = [...sketch.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]);
    const present = entries
      .filter((entry) => entry.isDirectory() || entry.name.endsWith('.ts'))
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name));
    expect(present.length).toBeGreaterThan(5);
    expect(sketched.toSorted()).toEqual(present.toSorted());
  });

  it("when the root's workspaces are read, then it names each package's folder and its npm name", () => {
    const root = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
    expect(root.workspaces).toEqual(expect.arrayContaining(['badge', 'reporter', 'server']));
    const missing = root.workspaces.flatMap((folder) => {
      const { name } = JSON.parse(fs.readFileSync(path.join(ROOT, folder, 'package.json'), 'utf8')) as { name: string };
      return [`${folder}/`, name].filter((text) => !named(text));
    });
    expect(missing).toEqual([]);
  });

  it("when the layer check's features are read, then the features row lists them in the same order", () => {
    const source = fs.readFileSync(path.join(ROOT, '.dependency-cruiser.cjs'), 'utf8');
    const listed = /const features = \[([\s\S]*?)\];/.exec(source)?.[1] ?? '';
    const features = [...listed.matchAll(/^\s*'([\w-]+)',/gm)].map((match) => match[1]);
    const row = doc.split('\n').find((line) => line.startsWith('| features |')) ?? '';
    const documented = [...row.split('(in that order')[0]!.matchAll(/`([\w-]+)\/`/g)].map((match) => match[1]);
    expect(features.length).toBeGreaterThan(20);
    expect(documented).toEqual(features);
  });

  it('when the server is searched for SQL, then it stands only in store modules and the exceptions named here', () => {
    // A query of postgres.js: a template tagged `sql`, `tx` or `….sql` (with or without its row
    // type), or `unsafe` text. Comments are left out.
    const query = /(?<![\w$])(?:sql|tx|[\w$]+\.sql)\s*(?:<[^`]*?>)?\s*`|\.unsafe\(/;
    const store = /(^|\/)store\.ts$|-store\.ts$/;
    const exceptions: Record<string, string> = {
      'db.ts': 'the database module itself: connecting, COPY, advisory locks',
      'migrate.ts': 'migrations and their ledger, before any feature',
      'backup/': 'reads and loads every table through the catalog, whatever feature owns it',
      // A run's writers, each the one module that writes its part (docs/architecture.md).
      'runs/record.ts': "the one writer of a run's row: its every change of state and counts",
      'runs/results.ts': 'the one writer of results: the COPY of a batch or a group, and the idempotent insert',
      'runs/open-run.ts': "the run's lock that every writer into a run takes first, with its refusal",
    };
    const excepted = (file: string) => Object.keys(exceptions).some((name) => (name.endsWith('/') ? file.startsWith(name) : file === name));
    const source = path.join(ROOT, 'server/src');
    const files = (fs.readdirSync(source, { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts'))
      .map((file) => file.split(path.sep).join('/'));
    const withQueries = files.filter((file) => {
      const text = fs
        .readFileSync(path.join(source, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      return query.test(text);
    });
    expect(withQueries.filter((file) => store.test(file)).length).toBeGreaterThan(20);
    expect(withQueries.filter((file) => !store.test(file) && !excepted(file))).toEqual([]);
    // An exception that no longer holds a query goes from the list.
    expect(Object.keys(exceptions).filter((name) => !withQueries.some((file) => (name.endsWith('/') ? file.startsWith(name) : file === name)))).toEqual([]);
  });
});
