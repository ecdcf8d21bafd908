-- A test's owners (`@user`, `@org/team`, an e-mail address): what the reporter found for it in the
-- repository's CODEOWNERS at the run's commit and in its `owner` annotations, refreshed whenever a
-- run or a sync lists it (docs/decisions/test-owners.md). Lists filter on one owner: `owners @> {x}`.
alter table test_cases add column owners text[] not null default '{}';
create index test_cases_owners on test_cases using gin (owners);
