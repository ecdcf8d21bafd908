-- The Playwright worker slot (`parallelIndex`) that ran an attempt: with its start and duration, the
-- run page's timeline draws each shard's workers as lanes. Null for results sent before it was
-- recorded, by a JUnit upload, or by a reporter that does not send it.
alter table test_results add column parallel_index smallint;
