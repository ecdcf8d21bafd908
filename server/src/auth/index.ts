// What other features and the jobs layer may use of keys.
export { createAgentToken, createListedKey, createRunKey, deleteRunKeys, type ListedKey, listKeys, revokeKey } from './store.ts';
