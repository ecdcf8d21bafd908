import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { rebuildRollups } from './analytics/rollups.ts';
import { writeBackup } from './backup/backup.ts';
import { describeBackup, describeRestore } from './backup/describe.ts';
import { RestoreRefused } from './backup/format.ts';
import { restoreBackup } from './backup/restore.ts';
import { ArchiveError } from './backup/tar.ts';
import { parseKey } from './auth/keys.ts';
import { KEY_SCOPES, type KeyScope } from './http/access.ts';
import { createKey, type KeyOwner, listKeys, revokeKey } from './auth/store.ts';
import { peopleCommand, UsageError } from './commands/people.ts';
import { repositoryCommand } from './commands/repositories.ts';
import { bindAtSetup } from './bindings/index.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DomainError } from './errors.ts';
import { openDatabaseForCli } from './db.ts';
import { DataDirLockedError } from './embedded.ts';
import { createLogger } from './logger.ts';
import { migrate } from './migrate.ts';
import { repoNameFor } from './projects/repo-name.ts';
import { createProject, getProject } from './projects/store.ts';
import { startServer } from './server.ts';
import { PortInUseError } from './serving.ts';
import { describeReport, runRetentionPass, serverPolicy } from './retention/index.ts';
import { openStorage } from './storage/open.ts';
import { chatAccountSchema, scmAccountSchema } from './users/schema.ts';
import { linkAccount, userExists } from './users/store.ts';

const USAGE = `usage: proctor <command>
  serve                                         start the service
  migrate                                       apply pending migrations
  project create --name N [--repo PATH|URL] [--repo-name owner/name]
                                                without --repo: reports only, until one is set to trigger runs;
                                                a repository on the server's GitHub or GitLab is bound to it
  repository bind --project P (--github owner/name | --gitlab group/name|ID)
                                                the server's GitHub App or GitLab token may act there for P
  repository unbind --project P (--github owner/name | --gitlab group/name|ID)
  repository list --project P
  user create --email E --name N [--admin]      --admin: an instance admin (makes projects, manages every one)
  user list                                     every person: id, email, name, admin, projects
  user login-link (--email E | --user U)        a one-time dashboard sign-in URL (15 minutes), alone on stdout
  user link --user U (--chat JSON | --scm JSON)
  member add --project P (--email E | --user U) [--role viewer|member|admin]
                                                member by default; an email without an account gets an invitation link
  member list --project P
  member remove --project P (--email E | --user U)   the project's last admin stays
  key create (--project P | --user U) [--scope read|report|admin]   admin unless given
  key list (--project P | --user U)             the keys' ids, scopes and dates, never secrets
  key revoke --key ID                           the key's id (prc_p_<ID>_…) or the whole key
  analytics rebuild --project P                 recompute the project's analytics rollups from its results
  backup --out FILE                             one archive (.tar.gz) of the database and the stored files, as of one
                                                moment, while the server keeps serving
  restore FILE                                  a backup into an empty data directory or database (upgraded to this version)
  retention run [--project P] [--dry-run]       delete what the retention policies expired (the server does it hourly);
                                                --dry-run prints what would go (runs, results, files, bytes)
  mcp [--url URL] [--key KEY] [--project ID]    Proctor's MCP server on stdio, for an assistant that starts a process
                                                (relayed to the server's /mcp; URL and KEY also from PROCTOR_URL, PROCTOR_API_KEY)
  agent --url URL --key KEY (--run ID | --environment SLUG [--run-key K]) [--name N]
        [--workdir DIR] [--workspace DIR]       join a run and run its units until none is left
                                                (URL, KEY from PROCTOR_URL, PROCTOR_API_KEY; --run-key: the CI build's id)
  --help, --version

Settings come from the environment: DATABASE_URL (unset: an embedded PostgreSQL in
PROCTOR_DATA_DIR, default .proctor), PORT (default 3000), and the others docs/configuration.md lists.`;

/** The package's own version: package.json sits one folder up from src/ and from the compiled dist/. */
function packageVersion(): string {
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
}

type Flags = Record<string, string | undefined> & { 'dry-run'?: boolean };

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function projectIdFlag(flags: Flags): number {
  const id = Number(required(flags, 'project'));
  if (!Number.isInteger(id) || id < 1) throw new UsageError('--project must be a project id (a positive integer)');
  return id;
}

function scopeFlag(flags: Flags): KeyScope {
  const scope = flags.scope ?? 'admin';
  if (!(KEY_SCOPES as readonly string[]).includes(scope)) throw new UsageError(`--scope must be one of ${KEY_SCOPES.join(', ')}`);
  return scope as KeyScope;
}

function parseJsonFlag<S extends z.ZodType>(schema: S, raw: string, flag: string): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new UsageError(`--${flag} must be JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(`--${flag}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, logger);
  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await server.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** Runs one data command against whichever database the server uses. */
async function withDatabase<T>(work: (db: Awaited<ReturnType<typeof openDatabaseForCli>>) => Promise<T>): Promise<T> {
  const db = await openDatabaseForCli(loadConfig());
  try {
    await migrate(db.sql);
    return await work(db);
  } finally {
    await db.close();
  }
}

/** The project or user that `--project` or `--user` names, checked to exist. */
async function keyOwner(sql: Awaited<ReturnType<typeof openDatabaseForCli>>['sql'], flags: Flags): Promise<KeyOwner> {
  if (flags.project) {
    const projectId = projectIdFlag(flags);
    if (!(await getProject(sql, projectId))) throw new UsageError(`no project ${projectId}`);
    return { projectId };
  }
  const userId = required(flags, 'user');
  if (!(await userExists(sql, userId))) throw new UsageError(`no user ${userId}`);
  return { userId };
}

async function dataCommand(words: string[], flags: Flags): Promise<string> {
  const command = words.join(' ');
  return withDatabase(async ({ sql }) => {
    const people = await peopleCommand(sql, command, flags);
    if (people !== null) return people;
    const repositories = await repositoryCommand(sql, command, flags);
    if (repositories !== null) return repositories;
    switch (command) {
      case 'migrate':
        return 'migrations up to date';
      case 'project create': {
        // Without --repo, a project that only receives reports (the reporter, JUnit uploads).
        const repo = flags.repo ?? null;
        const settings = loadConfig().notify;
        const project = await sql.begin(async (tx) => {
          const made = await createProject(tx, { name: required(flags, 'name'), repoUrl: repo, repoName: repoNameFor(repo, flags['repo-name']) });
          if (made.repo_url !== null)
            await bindAtSetup(tx, { id: made.id, repo_url: made.repo_url }, { kind: 'system', name: 'proctor command line' }, settings, new Date());
          return made;
        });
        return String(project.id);
      }
      case 'user link': {
        const userId = required(flags, 'user');
        if (!(await userExists(sql, userId))) throw new UsageError(`no user ${userId}`);
        if (flags.chat) await linkAccount(sql, userId, { kind: 'chat', account: parseJsonFlag(chatAccountSchema, flags.chat, 'chat') });
        else if (flags.scm) await linkAccount(sql, userId, { kind: 'scm', account: parseJsonFlag(scmAccountSchema, flags.scm, 'scm') });
        else throw new UsageError('give --chat JSON or --scm JSON');
        return 'ok';
      }
      case 'key create':
        return createKey(sql, await keyOwner(sql, flags), scopeFlag(flags));
      case 'key list': {
        const keys = await listKeys(sql, await keyOwner(sql, flags));
        return keys
          .map((key) => [key.id, key.scope, key.created_at.toISOString(), key.test_run_id ? `run ${key.test_run_id}` : ''].join('\t').trimEnd())
          .join('\n');
      }
      case 'key revoke': {
        const given = required(flags, 'key');
        const id = parseKey(given)?.id ?? given;
        if (!(await revokeKey(sql, null, id))) throw new UsageError(`no key ${id}`);
        return 'revoked';
      }
      case 'retention run': {
        const projectId = flags.project === undefined ? undefined : projectIdFlag(flags);
        if (projectId !== undefined && !(await getProject(sql, projectId))) throw new UsageError(`no project ${projectId}`);
        const dryRun = flags['dry-run'] === true;
        const config = loadConfig();
        const deps = { sql, storage: await openStorage(config), clock: () => new Date(), defaults: serverPolicy(config) };
        const reports = await runRetentionPass(deps, { projectId, dryRun });
        return reports.map((report) => describeReport(report, dryRun)).join('\n') || 'no projects';
      }
      case 'backup': {
        const out = required(flags, 'out');
        const config = loadConfig();
        const summary = await writeBackup(
          { sql, embedded: !config.databaseUrl, storage: await openStorage(config), storageKind: config.s3 ? 's3' : 'files', proctorVersion: packageVersion() },
          out,
        );
        return describeBackup(summary, out, config.s3 !== null);
      }
      case 'analytics rebuild': {
        const projectId = projectIdFlag(flags);
        if (!(await getProject(sql, projectId))) throw new UsageError(`no project ${projectId}`);
        await rebuildRollups(sql, projectId);
        return 'rollups rebuilt';
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  });
}

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...Object.fromEntries(
        ['name', 'repo', 'repo-name', 'email', 'project', 'user', 'chat', 'scm', 'scope', 'key', 'role', 'out', 'github', 'gitlab'].map((flag) => [
          flag,
          { type: 'string' as const },
        ]),
      ),
      'dry-run': { type: 'boolean' },
      admin: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help || positionals[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('no command given');
  if (positionals[0] === 'serve') {
    await serve();
    return -1;
  }
  if (positionals[0] === 'restore') {
    if (positionals.length !== 2) throw new UsageError('restore takes one backup file: proctor restore FILE');
    process.stdout.write(`${describeRestore(await restoreBackup(positionals[1] as string, loadConfig()))}\n`);
    return 0;
  }
  process.stdout.write(`${await dataCommand(positionals, values as unknown as Flags)}\n`);
  return 0;
}

/** Runs the CLI and exits with its status; `serve` keeps the process alive until a signal. */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (error: unknown) => {
      if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
        process.stderr.write(`proctor: ${(error as Error).message}\n${USAGE}\n`);
        process.exit(2);
      }
      if (
        error instanceof ConfigError ||
        error instanceof DataDirLockedError ||
        error instanceof PortInUseError ||
        error instanceof DomainError ||
        error instanceof RestoreRefused ||
        error instanceof ArchiveError
      ) {
        process.stderr.write(`proctor: ${error.message}\n`);
        process.exit(1);
      }
      process.stderr.write(`proctor: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
