import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The server and the action import the reporter package by name (`@proctor/reporter/…`), and their
// type check reads its sources, not its build: the package's exports name them under the
// `@proctor/source` condition, which the repository's tsconfigs set (customConditions) and Node,
// vitest and the server's build (server/tsconfig.build.json) do not. So a reporter function whose
// shape changed fails the type check of its users at once, with reporter/dist as it was. The checks
// below run the compiler on one user's file and what it imports, the reporter's source changed in
// memory only (reporter/dist is never rebuilt here).

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const at = (file: string) => path.join(ROOT, file);

function options(config: string): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    at(config),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`${config} could not be read`);
  return { ...parsed.options, noEmit: true };
}

/** Where `specifier`, imported from `importer`, resolves under `config`, relative to the root. */
function resolved(config: string, importer: string, specifier: string): string | undefined {
  const file = ts.resolveModuleName(specifier, at(importer), options(config), ts.sys).resolvedModule?.resolvedFileName;
  return file && path.relative(ROOT, file);
}

/** Files parsed once for every program below (the libraries' declarations above all), but a changed one. */
const parsed = new Map<string, ts.SourceFile | undefined>();

/** The type check's errors for `user` and what it imports, with `changed` read as `rewrite` makes it. */
function typeErrors(config: string, user: string, changed: string, rewrite: (source: string) => string): string[] {
  const compilerOptions = options(config);
  const host = ts.createCompilerHost(compilerOptions);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) => {
    if (path.resolve(file) === at(changed)) {
      const text = ts.sys.readFile(file);
      return text === undefined ? undefined : ts.createSourceFile(file, rewrite(text), language);
    }
    const key = `${file}\0${typeof language === 'object' ? language.languageVersion : language}`;
    if (!parsed.has(key)) parsed.set(key, getSourceFile(file, language, ...rest));
    return parsed.get(key);
  };
  const program = ts.createProgram({ rootNames: [at(user)], options: compilerOptions, host });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (diagnostic) =>
        `${diagnostic.file ? path.relative(ROOT, diagnostic.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
    );
}

const USERS = [
  {
    who: 'the server',
    config: 'server/tsconfig.json',
    user: 'server/src/failuregroups/title.ts',
    specifier: '@proctor/reporter/signature',
    resolves: 'reporter/src/text/signature.ts',
    source: 'reporter/src/text/ansi.ts',
    before: 'export function stripAnsi(text: string): string {',
    after: "export function stripAnsi(text: string, keep: 'colour' | 'none'): string {",
  },
  {
    who: 'the action',
    config: 'action/tsconfig.json',
    user: 'action/src/main.ts',
    specifier: '@proctor/reporter/runs/name',
    resolves: 'reporter/src/runs/name.ts',
    source: 'reporter/src/runs/name.ts',
    before: 'export function runName(run: { id: number; number?: number | null }): string {',
    after: 'export function runName(run: { id: number; number: number | null; environment: string }): string {',
  },
];

describe('the reporter package, as its users type-check against it', () => {
  it.each(USERS)("when $who's tsconfig (and the root's, which npm run typecheck reads) resolves $specifier, then it reads the source", (use) => {
    expect(resolved(use.config, use.user, use.specifier)).toBe(use.resolves);
    expect(resolved('tsconfig.json', use.user, use.specifier)).toBe(use.resolves);
  });

  it("when the server is built (server/tsconfig.build.json), then it compiles against the reporter's build, as Node runs it", () => {
    expect(resolved('server/tsconfig.build.json', 'server/src/notifications/request-comment.ts', '@proctor/reporter/markdown')).toBe(
      'reporter/dist/text/markdown.d.ts',
    );
  });

  it.each(USERS)('when a function $who uses changes shape in its source and reporter/dist is not rebuilt, then its type check fails naming the call', (use) => {
    expect(typeErrors(use.config, use.user, use.source, (text) => text)).toEqual([]);
    let read: string | null = null;
    const errors = typeErrors(use.config, use.user, use.source, (text) => {
      read = text;
      return text.replace(use.before, use.after);
    });
    expect(read, `the type check of ${use.user} did not read ${use.source}: it reads the reporter's build`).not.toBeNull();
    expect(read, `${use.source} no longer declares: ${use.before}`).toContain(use.before);
    expect(errors.filter((error) => error.startsWith(`${use.user}:`)).length).toBeGreaterThan(0);
  });
});
