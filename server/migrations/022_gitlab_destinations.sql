-- GitLab destinations: a commit status and one note per merge request, on a GitLab project named by
-- its path or id. The note a destination keeps on a merge request is kept where a GitHub
-- destination keeps its pull request comment (github_pull_comments: a merge request's iid as the
-- number, the note's id as the comment's).
alter table notification_destinations add column gitlab_project text;
alter table notification_destinations drop constraint notification_destinations_type_check;
alter table notification_destinations drop constraint notification_destinations_check;
alter table notification_destinations add constraint notification_destinations_type_check check (type in ('slack', 'webhook', 'github', 'gitlab'));
alter table notification_destinations add constraint notification_destinations_check check (
  (type = 'github') = (repo is not null)
  and (type = 'gitlab') = (gitlab_project is not null)
  and (type in ('github', 'gitlab')) = (url is null)
);
