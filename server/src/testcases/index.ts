// What other features and the jobs layer may use of the test inventory.
export { deactivateUnlisted, testTitles, upsertTestCases } from './store.ts';
export { parseTagList } from './tags.ts';
