// CODEOWNERS files in GitHub's and GitLab's syntax: who owns a path of the repository.
// Pure (no file system): the reporter reads the file and asks this module for each test file's
// owners (docs/decisions/test-owners.md).
//
// GitHub (docs.github.com, "About code owners"): gitignore-like patterns, the last matching line
// wins, a line with no owners leaves its paths unowned; `!` and `[ ]` do not work there.
// GitLab (docs.gitlab.com, "Code Owners syntax"): a path not starting with `/` matches at any depth
// (as if it started with `/**/`), one ending with `/` matches everything under it, one without a
// trailing `/` or a wildcard matches that path alone; sections (`[Name]`, `^[Optional]`,
// `[Name][2]`, default owners after the header) each give their own last match, so a path has the
// owners of every section that matches it; `!pattern` excludes a path from its section.

export type CodeownersDialect = 'github' | 'gitlab';

export interface CodeownersRule {
  /** The pattern as written (escapes kept), without a leading `!`. */
  pattern: string;
  /** The owners a match gives: the line's, or (GitLab) its section's default owners. */
  owners: string[];
  /** GitLab's `!pattern`: the path has no owners from this section. */
  exclusion: boolean;
  line: number;
  matches: (path: string) => boolean;
}

export interface CodeownersSection {
  /** `''` for the lines before any section header. */
  name: string;
  optional: boolean;
  approvals: number;
  defaultOwners: string[];
  rules: CodeownersRule[];
}

export interface CodeownersProblem {
  line: number;
  message: string;
}

export interface Codeowners {
  dialect: CodeownersDialect;
  sections: CodeownersSection[];
  /** Lines that were skipped, and why. */
  problems: CodeownersProblem[];
  /** The owners of a path relative to the repository's root (`tests/cart.spec.ts`), in the file's order, each once. */
  ownersOf: (path: string) => string[];
}

const SECTION = /^(\^)?\[([^\]]+)\](?:\[(\d+)\])?(.*)$/;

/** GitLab when the file is GitLab's (`.gitlab/CODEOWNERS`) or uses its syntax (sections, exclusions). */
export function detectDialect(text: string, filePath = ''): CodeownersDialect {
  if (filePath.replace(/^\/+/, '').startsWith('.gitlab/')) return 'gitlab';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (SECTION.test(line) || /^!\S/.test(line)) return 'gitlab';
  }
  return 'github';
}

/** Splits a line into words at unescaped whitespace, stopping at an unescaped `#` that starts a word (a comment). */
function words(line: string): string[] {
  const out: string[] = [];
  let word = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === '\\' && i + 1 < line.length) {
      word += c + line[i + 1];
      i++;
    } else if (c === ' ' || c === '\t') {
      if (word) out.push(word);
      word = '';
    } else if (c === '#' && word === '') {
      break;
    } else {
      word += c;
    }
  }
  if (word) out.push(word);
  return out;
}

/** `@user`, `@org/team`, `@@role` (GitLab) and e-mail addresses; anything else on a line is not an owner. */
function isOwner(word: string): boolean {
  return /^@\S+$/.test(word) || /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(word);
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/** One path segment of a glob: `*` any characters but `/`, `?` one, `\x` the character x. */
function segmentRegex(segment: string): string {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    if (c === '\\' && i + 1 < segment.length) {
      out += escapeRegex(segment[++i] as string);
    } else if (c === '*') {
      while (segment[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else {
      out += escapeRegex(c);
    }
  }
  return out;
}

/** A glob of `/`-separated segments; a segment `**` is any number of directories (or, last, anything). */
function globRegex(glob: string): string {
  const segments = glob.split('/');
  let out = '';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '**') {
      out += last ? '.*' : '(?:[^/]*/)*';
      return;
    }
    out += segmentRegex(segment) + (last ? '' : '/');
  });
  return out;
}

/** The directories a path is in, outermost first, then the path itself. */
function prefixes(path: string): { dirs: string[]; file: string } {
  const parts = path.split('/');
  const dirs: string[] = [];
  for (let i = 1; i < parts.length; i++) dirs.push(parts.slice(0, i).join('/'));
  return { dirs, file: path };
}

function normalPath(path: string): string {
  return path.replace(/\\/g, '/').replace(/^\.?\/+/, '');
}

/** GitHub's gitignore-like matching. */
function githubMatcher(pattern: string): (path: string) => boolean {
  let glob = pattern;
  const dirOnly = glob.endsWith('/');
  if (dirOnly) glob = glob.replace(/\/+$/, '');
  const anchored = glob.startsWith('/') || glob.includes('/');
  glob = glob.replace(/^\/+/, '');
  const regex = new RegExp(`${anchored ? '^' : '(?:^|/)'}${globRegex(glob)}$`);
  // `docs/*` owns the files directly in docs/, not those further down (GitHub's documented exception to gitignore).
  const filesOnly = !dirOnly && glob.split('/').pop() === '*';
  return (path) => {
    const { dirs, file } = prefixes(normalPath(path));
    if (!filesOnly && dirs.some((dir) => regex.test(dir))) return true;
    return !dirOnly && regex.test(file);
  };
}

/** GitLab's matching: File.fnmatch with FNM_PATHNAME and FNM_DOTMATCH on the path from the root. */
function gitlabMatcher(pattern: string): (path: string) => boolean {
  let glob = pattern === '*' ? '/**/*' : pattern;
  if (!glob.startsWith('/')) glob = `/**/${glob}`;
  if (glob.endsWith('/')) glob += '**/*';
  const regex = new RegExp(`^${globRegex(glob.replace(/^\/+/, ''))}$`);
  return (path) => regex.test(normalPath(path));
}

export function parseCodeowners(text: string, dialect: CodeownersDialect = detectDialect(text)): Codeowners {
  const problems: CodeownersProblem[] = [];
  const unnamed: CodeownersSection = { name: '', optional: false, approvals: 0, defaultOwners: [], rules: [] };
  const sections: CodeownersSection[] = [unnamed];
  let current = unnamed;
  let defaults: string[] = [];

  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    if (dialect === 'gitlab') {
      const header = SECTION.exec(trimmed);
      if (header) {
        const name = (header[2] as string).trim();
        const owners = words(header[4] ?? '').filter(isOwner);
        const same = sections.find((section) => section.name !== '' && section.name.toLowerCase() === name.toLowerCase());
        current = same ?? { name, optional: header[1] === '^', approvals: header[3] ? Number(header[3]) : 0, defaultOwners: owners, rules: [] };
        if (!same) sections.push(current);
        defaults = owners;
        return;
      }
    }
    const [first, ...rest] = words(trimmed);
    if (!first) return;
    const exclusion = first.startsWith('!');
    if (exclusion && dialect === 'github') {
      problems.push({ line, message: 'GitHub does not support `!` negation; line skipped' });
      return;
    }
    const pattern = exclusion ? first.slice(1) : first;
    if (pattern === '') {
      problems.push({ line, message: 'empty pattern; line skipped' });
      return;
    }
    const ignored = rest.filter((word) => !isOwner(word));
    if (ignored.length > 0) problems.push({ line, message: `not owners, ignored: ${ignored.join(' ')}` });
    const own = rest.filter(isOwner);
    current.rules.push({
      pattern,
      owners: exclusion ? [] : own.length > 0 || dialect === 'github' ? own : defaults,
      exclusion,
      line,
      matches: dialect === 'github' ? githubMatcher(pattern) : gitlabMatcher(pattern),
    });
  });

  const ownersOf = (path: string): string[] => {
    const found = new Set<string>();
    for (const section of sections) {
      if (section.rules.some((rule) => rule.exclusion && rule.matches(path))) continue;
      for (let i = section.rules.length - 1; i >= 0; i--) {
        const rule = section.rules[i] as CodeownersRule;
        if (rule.exclusion || !rule.matches(path)) continue;
        for (const owner of rule.owners) found.add(owner);
        break;
      }
    }
    return [...found];
  };

  return { dialect, sections: sections.filter((section) => (section.name === '' ? section.rules.length > 0 : true)), problems, ownersOf };
}
