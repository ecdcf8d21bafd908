-- A failure group's title names it on every page and notification: unique within its project. Groups
-- that share a title keep it, the later ones with " (2)", " (3)"… as new groups get theirs.
do $$
declare
  duplicate record;
  n integer;
begin
  for duplicate in
    select project_id, id, title
    from (select project_id, id, title, row_number() over (partition by project_id, title order by first_seen_at, id) as rank
          from failure_groups) ranked
    where rank > 1
    order by project_id, title, rank
  loop
    n := 2;
    while exists (select 1 from failure_groups where project_id = duplicate.project_id and title = duplicate.title || ' (' || n || ')') loop
      n := n + 1;
    end loop;
    update failure_groups set title = duplicate.title || ' (' || n || ')' where project_id = duplicate.project_id and id = duplicate.id;
  end loop;
end $$;

create unique index failure_groups_title on failure_groups (project_id, title);
