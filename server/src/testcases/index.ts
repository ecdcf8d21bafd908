// What other features and the jobs layer may use of the test inventory.
export { deactivateUnlisted, findTests, getTestCase, testTitles, upsertTestCases } from './store.ts';
export type { TestCaseRow } from './store.ts';
export type { ListedTest } from './schema.ts';
export { parseTagList } from './tags.ts';
