import { describe, expect, it } from 'vitest';
import { detectDialect, parseCodeowners } from '../../reporter/src/text/codeowners.ts';

// The example files of GitHub's "About code owners" and GitLab's "Code Owners syntax" pages, with
// the owners their comments promise for the paths they name.

const GITHUB_EXAMPLE = `# This is a comment.
# Each line is a file pattern followed by one or more owners.

# These owners will be the default owners for everything in
# the repo. Unless a later match takes precedence,
# @global-owner1 and @global-owner2 will be requested for
# review when someone opens a pull request.
*       @global-owner1 @global-owner2

# Order is important; the last matching pattern takes the most
# precedence. When someone opens a pull request that only
# modifies JS files, only @js-owner and not the global
# owner(s) will be requested for a review.
*.js    @js-owner #This is an inline comment.

# You can also use email addresses if you prefer.
*.go docs@example.com

# Teams can be specified as code owners as well.
*.txt @octo-org/octocats

# @doctocat owns any files in the build/logs directory at the root of the
# repository and any of its subdirectories.
/build/logs/ @doctocat

# The \`docs/*\` pattern will match files like
# \`docs/getting-started.md\` but not further nested files like
# \`docs/build-app/troubleshooting.md\`.
docs/*  docs@example.com

# @octocat owns any file in an apps directory anywhere in your repository.
apps/ @octocat

# @doctocat owns any file in the \`/docs\` directory in the root of your
# repository and any of its subdirectories.
/docs/ @doctocat

# Any change inside the \`/scripts\` directory will require approval from
# @doctocat or @octocat.
/scripts/ @doctocat @octocat

# @octocat owns any file in a \`/logs\` directory such as \`/build/logs\`,
# \`/scripts/logs\`, and \`/deeply/nested/logs\`.
**/logs @octocat

# @octocat owns any file in the \`/apps\` directory in the root of your
# repository except for the \`/apps/github\` subdirectory, as this
# subdirectory has its own owner @doctocat
/apps/ @octocat
/apps/github @doctocat

# @octocat owns any file in the \`/apps\` directory in the root of your
# repository except for the \`/apps/github\` subdirectory, as its owners are
# left empty. Without an owner, changes to \`apps/github\` can be made with
# the approval of any user who has write access to the repository.
/apps/ @octocat
/apps/github
`;

describe("GitHub's syntax", () => {
  const owners = parseCodeowners(GITHUB_EXAMPLE, 'github');

  it.each([
    ['README.md', ['@global-owner1', '@global-owner2']],
    ['src/index.js', ['@js-owner']],
    ['cmd/main.go', ['docs@example.com']],
    ['notes/todo.txt', ['@octo-org/octocats']],
    ['build/logs/2024/out.log', ['@octocat']],
    ['docs/getting-started.md', ['@doctocat']],
    ['scripts/deploy.sh', ['@doctocat', '@octocat']],
    ['scripts/logs/today.log', ['@octocat']],
    ['deeply/nested/logs/x.log', ['@octocat']],
    ['web/apps/page.tsx', ['@octocat']],
    ['apps/web/page.tsx', ['@octocat']],
    ['apps/github/page.tsx', []],
  ])("when the documentation's example file owns %s, then its owners are %j", (path, expected) => {
    expect(owners.ownersOf(path)).toEqual(expected);
  });

  it('when a pattern ends with /*, then it owns the files directly in the folder and not those further down', () => {
    const file = parseCodeowners('* @all\ndocs/* @docs', 'github');
    expect(file.ownersOf('docs/getting-started.md')).toEqual(['@docs']);
    expect(file.ownersOf('docs/build-app/troubleshooting.md')).toEqual(['@all']);
  });

  it('when a pattern has a slash in the middle, then it is anchored at the root as in gitignore', () => {
    const file = parseCodeowners('tests/e2e @e2e', 'github');
    expect(file.ownersOf('tests/e2e/cart.spec.ts')).toEqual(['@e2e']);
    expect(file.ownersOf('app/tests/e2e/cart.spec.ts')).toEqual([]);
  });

  it('when a pattern has no slash, then it matches a file or folder of that name at any depth', () => {
    const file = parseCodeowners('checkout @shop\n*.spec.ts @qa', 'github');
    expect(file.ownersOf('tests/checkout/pay.ts')).toEqual(['@shop']);
    expect(file.ownersOf('tests/checkout/pay.spec.ts')).toEqual(['@qa']);
    expect(file.ownersOf('checkout')).toEqual(['@shop']);
  });

  it('when a pattern ends with a slash, then it matches folders only, not a file of that name', () => {
    const file = parseCodeowners('logs/ @logs', 'github');
    expect(file.ownersOf('logs')).toEqual([]);
    expect(file.ownersOf('a/logs/b.txt')).toEqual(['@logs']);
  });

  it('when ** stands between folders or at the end, then it matches any number of folders', () => {
    const file = parseCodeowners('a/**/b @ab\n/x/** @x\n?.md @one', 'github');
    expect(file.ownersOf('a/b/c.ts')).toEqual(['@ab']);
    expect(file.ownersOf('a/x/y/b/c.ts')).toEqual(['@ab']);
    expect(file.ownersOf('x/deep/er/file')).toEqual(['@x']);
    expect(file.ownersOf('docs/a.md')).toEqual(['@one']);
    expect(file.ownersOf('docs/ab.md')).toEqual([]);
  });

  it('when a line uses ! (which GitHub does not support), then the line is skipped and reported', () => {
    const file = parseCodeowners('* @all\n!*.md', 'github');
    expect(file.ownersOf('README.md')).toEqual(['@all']);
    expect(file.problems).toEqual([{ line: 2, message: expect.stringContaining('!') }]);
  });

  it('when a pattern escapes # or spaces, then it is a pattern and not a comment', () => {
    const file = parseCodeowners('\\#file_with_pound.rb @pound\npath\\ with\\ spaces/ @space\n# *.ts @nobody', 'github');
    expect(file.ownersOf('#file_with_pound.rb')).toEqual(['@pound']);
    expect(file.ownersOf('path with spaces/a.ts')).toEqual(['@space']);
    expect(file.ownersOf('a.ts')).toEqual([]);
  });

  it('when paths differ only in case, then they do not match (GitHub matches case-sensitively)', () => {
    expect(parseCodeowners('/Docs/ @docs', 'github').ownersOf('docs/a.md')).toEqual([]);
  });
});

// GitLab's reference example and its sections.
const GITLAB_EXAMPLE = `# This is an example of a CODEOWNERS file.
# Lines that start with \`#\` are ignored.

# Specify a default Code Owner by using a wildcard:
* @default-codeowner

# Rules defined later in the file take precedence over earlier rules.
*.rb @ruby-owner

# Files with a \`#\` can still be accessed by escaping the pound sign:
\\#file_with_pound.rb @owner-file-with-pound

# You can use both usernames or email addresses to match users:
LICENSE @legal this does not match janedoe@gitlab.com

# Use group names to match groups, and nested groups:
README @group @group/with-nested/subgroup

# Specify Code Owners for directories:
/docs/ @all-docs
/docs/* @root-docs
/docs/**/*.md @root-docs

# Match directories nested anywhere in the repository:
lib/ @lib-owner

# Match only a directory in the root of the repository:
/config/ @config-owner

# If the path contains spaces, escape them like this:
path\\ with\\ spaces/ @space-owner

# Code Owners sections:
[Documentation]
ee/docs    @docs
docs       @docs

# Use of default owners for a section. In this case, all files (*) are owned by
# the dev team except the README.md and data-models which are owned by other teams.
[Development] @dev-team
*
README.md @docs-team
data-models/ @data-science-team

# This section is combined with the previously defined [Documentation] section:
[DOCUMENTATION]
README.md  @docs
`;

describe("GitLab's syntax", () => {
  const owners = parseCodeowners(GITLAB_EXAMPLE);

  it("when the file has sections, then it is read as GitLab's", () => {
    expect(owners.dialect).toBe('gitlab');
    expect(detectDialect('* @a', '.gitlab/CODEOWNERS')).toBe('gitlab');
    expect(detectDialect('* @a\n*.md @b', 'CODEOWNERS')).toBe('github');
  });

  it.each([
    ['app/models/user.rb', ['@ruby-owner', '@dev-team']],
    ['#file_with_pound.rb', ['@owner-file-with-pound', '@dev-team']],
    ['LICENSE', ['@legal', 'janedoe@gitlab.com', '@dev-team']],
    ['README', ['@group', '@group/with-nested/subgroup', '@dev-team']],
    ['docs/index.md', ['@root-docs', '@dev-team']],
    ['docs/projects/index.md', ['@root-docs', '@dev-team']],
    ['docs/projects/image.png', ['@all-docs', '@dev-team']],
    ['app/lib/helper.js', ['@lib-owner', '@dev-team']],
    ['config/app.yml', ['@config-owner', '@dev-team']],
    ['app/config/app.yml', ['@default-codeowner', '@dev-team']],
    ['path with spaces/file.txt', ['@space-owner', '@dev-team']],
    ['README.md', ['@default-codeowner', '@docs', '@docs-team']],
    ['data-models/user.sql', ['@default-codeowner', '@data-science-team']],
  ])('when the reference example owns %s, then each section adds its last match: %j', (path, expected) => {
    expect(owners.ownersOf(path)).toEqual(expected);
  });

  it('when sections are named alike in another case, then they are one section', () => {
    expect(owners.sections.map((section) => section.name)).toEqual(['', 'Documentation', 'Development']);
    expect(owners.problems).toEqual([{ line: 14, message: 'not owners, ignored: this does not match' }]);
  });

  it('when a section is optional or needs approvals, then the header says so and its default owners apply to lines without owners', () => {
    const file = parseCodeowners('^[Frontend][2] @fe-leads\n*.tsx\n*.css @designers\n[Backend] @be\n/api/ @api-team');
    expect(file.sections.map(({ name, optional, approvals, defaultOwners }) => ({ name, optional, approvals, defaultOwners }))).toEqual([
      { name: 'Frontend', optional: true, approvals: 2, defaultOwners: ['@fe-leads'] },
      { name: 'Backend', optional: false, approvals: 0, defaultOwners: ['@be'] },
    ]);
    expect(file.ownersOf('src/app/page.tsx')).toEqual(['@fe-leads']);
    expect(file.ownersOf('src/app/page.css')).toEqual(['@designers']);
    expect(file.ownersOf('api/users.ts')).toEqual(['@api-team']);
  });

  it('when !pattern excludes a path, then that section gives it no owners while other sections still do', () => {
    // GitLab's own example for exclusions: the default section owns all but the Ruby files,
    // the Ruby section all Ruby files but those in /config.
    const file = parseCodeowners('* @group-x\n!*.rb\n\n[Ruby]\n*.rb @ruby-devs\n!/config/*');
    expect(file.ownersOf('app/user.rb')).toEqual(['@ruby-devs']);
    expect(file.ownersOf('config/boot.rb')).toEqual([]);
    expect(file.ownersOf('app/user.js')).toEqual(['@group-x']);
  });

  it('when an exclusion comes before a later match, then it still wins (exclusions are final in their section)', () => {
    const file = parseCodeowners('!pom.xml\n* @default-owner');
    expect(file.ownersOf('pom.xml')).toEqual([]);
    expect(file.ownersOf('src/a.java')).toEqual(['@default-owner']);
  });

  it('when a path has no leading slash, then it matches at any depth, and without a trailing slash only that path', () => {
    const file = parseCodeowners('[A]\ndocs/* @docs\n/exact/dir @exact', 'gitlab');
    expect(file.ownersOf('docs/a.md')).toEqual(['@docs']);
    expect(file.ownersOf('sub/docs/a.md')).toEqual(['@docs']);
    expect(file.ownersOf('docs/deep/a.md')).toEqual([]);
    expect(file.ownersOf('exact/dir')).toEqual(['@exact']);
    expect(file.ownersOf('exact/dir/file')).toEqual([]);
  });

  it('when a role is named with @@, then it is an owner as written', () => {
    expect(parseCodeowners('[Roles]\n/config/ @@maintainer').ownersOf('config/a')).toEqual(['@@maintainer']);
  });
});
