// The `proctor` command: parses the command line and loads the one module its command needs, so
// that a command answers at once (docs/decisions/cli-start.md). Nothing here imports the server,
// the database or zod at the top: each command's module does, when it runs.
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { type Flags, UsageError } from './commands/usage.ts';

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
  key create (--project P | --user U) [--scope read|report|admin] [--name N]
                                                admin unless given; N: what it is for, shown in lists
  key list (--project P | --user U)             the keys' ids, scopes, dates and names, never secrets
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

const FLAGS = ['name', 'repo', 'repo-name', 'email', 'project', 'user', 'chat', 'scm', 'scope', 'key', 'role', 'out', 'github', 'gitlab'];

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...Object.fromEntries(FLAGS.map((flag) => [flag, { type: 'string' as const }])),
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
    const { serve } = await import('./commands/serve.ts');
    await serve();
    return -1;
  }
  if (positionals[0] === 'restore') {
    if (positionals.length !== 2) throw new UsageError('restore takes one backup file: proctor restore FILE');
    const { restore } = await import('./commands/maintenance.ts');
    process.stdout.write(`${await restore(positionals[1] as string)}\n`);
    return 0;
  }
  const { dataCommand } = await import('./commands/data.ts');
  process.stdout.write(`${await dataCommand(positionals, values as Flags, packageVersion)}\n`);
  return 0;
}

/** Errors that a command says in one line, without a stack: their modules load only when one is thrown. */
async function isPlainError(error: unknown): Promise<boolean> {
  const [config, embedded, serving, errors, format, tar] = await Promise.all([
    import('./config.ts'),
    import('./embedded.ts'),
    import('./serving.ts'),
    import('./errors.ts'),
    import('./backup/format.ts'),
    import('./backup/tar.ts'),
  ]);
  return [config.ConfigError, embedded.DataDirLockedError, serving.PortInUseError, errors.DomainError, format.RestoreRefused, tar.ArchiveError].some(
    (kind) => error instanceof kind,
  );
}

/** Runs the CLI and exits with its status; `serve` keeps the process alive until a signal. */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    async (error: unknown) => {
      if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
        process.stderr.write(`proctor: ${(error as Error).message}\n${USAGE}\n`);
        process.exit(2);
      }
      if (await isPlainError(error).catch(() => false)) {
        process.stderr.write(`proctor: ${(error as Error).message}\n`);
        process.exit(1);
      }
      process.stderr.write(`proctor: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
