// `proctor key …`: a project's keys or a person's, each change in the audit trail with the
// operating system's user who ran the command.
import { recordChange } from '../audit/store.ts';
import { parseKey } from '../auth/keys.ts';
import { createListedKey, findKey, type KeyOwner, type ListedKey, listKeys, revokeKey } from '../auth/store.ts';
import type { Sql } from '../db.ts';
import { KEY_SCOPES, type KeyScope } from '../principals.ts';
import { getProject } from '../projects/store.ts';
import { userExists } from '../users/store.ts';
import { commandLineActor, type Flags, projectIdFlag, required, UsageError } from './usage.ts';

function scopeFlag(flags: Flags): KeyScope {
  const scope = (flags.scope as string | undefined) ?? 'admin';
  if (!(KEY_SCOPES as readonly string[]).includes(scope)) throw new UsageError(`--scope must be one of ${KEY_SCOPES.join(', ')}`);
  return scope as KeyScope;
}

/** `--name`: what the key is for, trimmed, as the API takes it (at most 100 characters). */
function nameFlag(flags: Flags): string | null {
  if (flags.name === undefined) return null;
  const name = String(flags.name).trim();
  if (name === '' || name.length > 100) throw new UsageError('--name must be 1 to 100 characters (trimmed)');
  return name;
}

/** The project or user that `--project` or `--user` names, checked to exist. */
async function keyOwner(sql: Sql, flags: Flags): Promise<KeyOwner> {
  if (flags.project) {
    const projectId = projectIdFlag(flags);
    if (!(await getProject(sql, projectId))) throw new UsageError(`no project ${projectId}`);
    return { projectId };
  }
  const userId = required(flags, 'user');
  if (!(await userExists(sql, userId))) throw new UsageError(`no user ${userId}`);
  return { userId };
}

/** A key as the audit trail keeps it: as the keys API lists it, never its secret. */
const listed = (key: ListedKey) => ({
  id: key.id,
  name: key.name,
  kind: key.kind,
  scope: key.scope,
  test_run_id: key.test_run_id,
  test_run_number: key.test_run_number,
  created_by: key.created_by,
  created_at: key.created_at.toISOString(),
  last_used_at: key.last_used_at?.toISOString() ?? null,
});

/** Runs a key command; null when `command` is not one. */
export async function keyCommand(sql: Sql, command: string, flags: Flags): Promise<string | null> {
  switch (command) {
    case 'key create': {
      const owner = await keyOwner(sql, flags);
      const scope = scopeFlag(flags);
      const name = nameFlag(flags);
      return sql.begin(async (tx) => {
        const made = await createListedKey(tx, owner, scope, null, name);
        const projectId = 'projectId' in owner ? owner.projectId : null;
        await recordChange(tx, { projectId, actor: commandLineActor(), action: 'key.created', target: `key:${made.id}`, after: listed(made) }, new Date());
        return made.key;
      });
    }
    case 'key list': {
      const keys = await listKeys(sql, await keyOwner(sql, flags));
      return keys
        .map((key) =>
          [key.id, key.scope, key.created_at.toISOString(), key.test_run_id ? `run #${key.test_run_number}` : (key.name ?? '')].join('\t').trimEnd(),
        )
        .join('\n');
    }
    case 'key revoke': {
      const given = required(flags, 'key');
      const id = parseKey(given)?.id ?? given;
      const revoked = await sql.begin(async (tx) => {
        const stored = await findKey(tx, id);
        if (!stored) return false;
        const owner: KeyOwner = stored.project_id !== null ? { projectId: stored.project_id } : { userId: stored.user_id as string };
        const [before] = await listKeys(tx, owner, id);
        if (!(await revokeKey(tx, null, id))) return false;
        const change = { projectId: stored.project_id, actor: commandLineActor(), action: 'key.revoked', target: `key:${id}` };
        await recordChange(tx, before ? { ...change, before: listed(before) } : change, new Date());
        return true;
      });
      if (!revoked) throw new UsageError(`no key ${id}`);
      return 'revoked';
    }
    default:
      return null;
  }
}
