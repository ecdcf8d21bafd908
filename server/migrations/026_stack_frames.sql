-- A failure's first stack frames in the suite's own files (["tests/cart.spec.ts:12:5", …]), on its
-- final attempt, as the reporter sends them: where an assistant or a person starts reading. Null for
-- every other outcome and from reporters before this release.
alter table test_results add column stack_frames jsonb;
