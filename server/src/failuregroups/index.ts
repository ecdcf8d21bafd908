// What other features may use of failure groups: the groups and their members, as the API reads them.
export { foldMembers, type MemberEvent } from './members.ts';
export { attachShardFailures, updateGroup } from './service.ts';
export { type FailureGroupRow, getGroup, groupsOfTest, type LinkedIssue, listGroups, memberEvents } from './store.ts';
export { FAILURE_CATEGORIES, type FailedStep, type FailureCategory, failureCategory } from './category.ts';
