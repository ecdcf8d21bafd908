-- The test-case list in its order (file, line, name, runner project), so that a page is read off
-- the index rather than every test of the project sorted per request (bench/scale: page 100 of a
-- project of 40,000 tests took 47 ms, most of it the sort).
create index test_cases_list_order on test_cases (project_id, file_path, line nulls last, name, runner_project);
