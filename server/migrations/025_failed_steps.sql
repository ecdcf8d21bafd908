-- A failure's steps, outermost first ([{"category": "hook", "title": "beforeAll hook"}, …]), on its
-- final attempt, as the reporter sends them: what the failure's category is decided from beside its
-- error. Null for every other outcome and from reporters before this release.
alter table test_results add column failed_steps jsonb;

-- A failure group's kind, decided from its first failure (null for groups made before this release).
alter table failure_groups add column category text;
