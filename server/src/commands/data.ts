// The commands that read or change the data: each opens the server's database (the running
// server's embedded one through its socket, else its own), and loads its module while it opens.
import { loadConfig } from '../config.ts';
import { type Database, openDatabaseForCli } from '../db.ts';
import { migrate } from '../migrate.ts';
import { type Flags, UsageError } from './usage.ts';

type Command = (sql: Database['sql'], command: string, flags: Flags, version: () => string) => Promise<string | null>;

/** The module of a command's first word, loaded only when that command runs. */
const MODULES: Record<string, () => Promise<Command>> = {
  user: async () => (await import('./people.ts')).peopleCommand,
  member: async () => (await import('./people.ts')).peopleCommand,
  key: async () => (await import('./keys.ts')).keyCommand,
  project: async () => (await import('./projects.ts')).projectCommand,
  repository: async () => (await import('./repositories.ts')).repositoryCommand,
  retention: async () => (await import('./maintenance.ts')).maintenanceCommand,
  backup: async () => (await import('./maintenance.ts')).maintenanceCommand,
  analytics: async () => (await import('./maintenance.ts')).maintenanceCommand,
  migrate: async () => async () => 'migrations up to date',
};

/** Commands that may read or write much: their own embedded database runs as a server's does. */
const LONG = new Set(['retention', 'backup', 'analytics', 'migrate']);

export async function dataCommand(words: string[], flags: Flags, version: () => string): Promise<string> {
  const command = words.join(' ');
  const load = MODULES[words[0] as string];
  if (!load) throw new UsageError(`unknown command "${command}"`);
  const config = loadConfig();
  // The module loads while the database starts (the embedded one takes most of a command's time).
  const [run, db] = await Promise.all([load(), openDatabaseForCli(config, { briefly: !LONG.has(words[0] as string) })]);
  try {
    await migrate(db.sql);
    const answer = await run(db.sql, command, flags, version);
    if (answer === null) throw new UsageError(`unknown command "${command}"`);
    return answer;
  } finally {
    await db.close();
  }
}
