import type { Sql } from '../db.ts';
import { findKeys, type StoredKey } from './store.ts';

// Every request's key is read from the database when the request comes, so that a revoked key is
// refused at once on every worker. Under load that is a statement per request; the keys asked for
// in one turn of the event loop are read with one statement instead, each still after its request
// arrived.

export type KeyLookup = (id: string) => Promise<StoredKey | null>;

interface Asked {
  id: string;
  resolve: (key: StoredKey | null) => void;
  reject: (error: unknown) => void;
}

export function keyLookup(sql: Sql): KeyLookup {
  let asked: Asked[] = [];

  function readAsked(): void {
    const these = asked;
    asked = [];
    findKeys(sql, [...new Set(these.map((a) => a.id))]).then(
      (keys) => {
        const byId = new Map(keys.map((key) => [key.id, key]));
        for (const a of these) a.resolve(byId.get(a.id) ?? null);
      },
      (error: unknown) => {
        for (const a of these) a.reject(error);
      },
    );
  }

  return (id) =>
    new Promise((resolve, reject) => {
      if (asked.length === 0) setImmediate(readAsked);
      asked.push({ id, resolve, reject });
    });
}
