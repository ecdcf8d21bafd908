-- Live runs (issue 55, point 3): the transaction that stored each attempt, so that a run's stream
-- can say exactly which results a client has (every transaction below its snapshot's horizon, and
-- those named above it) and resume after a disconnect with nothing lost and nothing twice,
-- whichever server process or node stored them. Older rows stay null (their runs have ended); the
-- default is set apart from the column so that adding it rewrites nothing.
alter table test_results add column stored_xid xid8;
alter table test_results alter column stored_xid set default pg_current_xact_id();
