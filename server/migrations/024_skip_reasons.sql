-- Why a skipped test was skipped, as its test said (`test.skip(condition, reason)`), on its final
-- attempt; null for every other outcome and from reporters before this release.
alter table test_results add column skip_reason text;
