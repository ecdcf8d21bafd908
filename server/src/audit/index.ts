// What other features may use of the audit trail: recording a change in its own transaction.
export { type Actor, actorOf, audited, type Described, type Change, deleteChangesBefore, listChanges, recordChange } from './store.ts';
