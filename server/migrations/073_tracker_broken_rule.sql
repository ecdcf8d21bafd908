-- The rule that files an issue for a test turned broken on the default branch: one that failed its
-- last `broken_after_failures` runs there in a row (in one environment, without passing or being
-- flaky between), counted once per streak: at the run that makes the streak that long.
alter table tracker_settings add column create_for_broken_tests boolean not null default false;
alter table tracker_settings add column broken_after_failures integer not null default 3 check (broken_after_failures between 2 and 100);
