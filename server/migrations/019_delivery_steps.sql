-- The steps of a delivery that went through (a GitHub commit status, then its pull request's
-- comment): an attempt after a failure resumes at the first step not done rather than repeating one.
alter table notification_deliveries add column steps_done text[] not null default '{}';
