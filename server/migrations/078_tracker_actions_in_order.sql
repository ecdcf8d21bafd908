-- A link's actions are sent in the order they were queued, whatever the number of job workers, and
-- a run's outcome is never dropped for an older action of its kind still waiting: an action is left
-- out only when the link's newest waiting action is of its kind (a failure while its check waits),
-- so a failure after a waiting close still reopens. The index finds a link's waiting actions, oldest first.
drop index tracker_actions_waiting;
create index tracker_actions_waiting on tracker_actions (link_id, id) where state = 'pending';
