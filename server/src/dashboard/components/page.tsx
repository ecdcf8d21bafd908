import type { ComponentChildren } from 'preact';
import { dashboardAssets } from '../assets.ts';
import { mayCall } from '../permissions.ts';
import { renderHtml } from './html.ts';

/** The signed-in person a page is rendered for. */
export interface Viewer {
  userId: string;
  name: string;
  email: string;
  csrfToken: string;
}

export interface ProjectRef {
  id: number;
  name: string;
}

/** Proctor's mark: a check mark on the colour of a passed run. */
function Mark() {
  return <path d="M8 16.5l5.5 5.5L24 11" fill="none" stroke="#fff" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round" />;
}

/** The logo in the header: the mark, coloured by the theme's stylesheet, and the name. */
function Logo() {
  return (
    <>
      <svg class="logo" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
        <rect class="mark" width="32" height="32" rx="7" />
        <Mark />
      </svg>
      <span>Proctor</span>
    </>
  );
}

/** A run's state as a coloured badge (its colour from the stylesheet, by state). */
export function StateBadge(props: { state: string }) {
  return <span class={`state state-${props.state}`}>{props.state}</span>;
}

/** A project's sections: the daily ones on the header's line, the rarer ones under Manage. */
function ProjectLinks(props: { project: ProjectRef }) {
  const base = `/projects/${props.project.id}`;
  const link = ([path, label]: [string, string]) => <a href={`${base}/${path}`}>{label}</a>;
  const daily: [string, string][] = [
    ['runs', 'Runs'],
    ['tests', 'Tests'],
    ['flaky-tests', 'Flaky tests'],
    ['failure-groups', 'Failure groups'],
    ['environments', 'Environments'],
    ['snoozes', 'Snoozes'],
    ['analytics', 'Analytics'],
  ];
  const manage: [string, string][] = [
    ['members', 'Members'],
    ['settings', 'Settings'],
    ...(mayCall('GET /api/keys')
      ? ([
          ['keys', 'Keys'],
          ['audit', 'Audit'],
        ] as [string, string][])
      : []),
  ];
  return (
    <>
      <span class="project" title={props.project.name}>
        {props.project.name}
      </span>
      <span class="sections">{daily.map(link)}</span>
      <details class="more">
        <summary>Manage</summary>
        <div class="links">{manage.map(link)}</div>
      </details>
    </>
  );
}

/**
 * The project's search: a plain form to its search page, so that it works without the script;
 * the script focuses it on `/` (shortcuts listed behind `?`).
 */
function SearchBox(props: { project: { id: number } }) {
  return (
    <form class="search" role="search" method="get" action={`/projects/${props.project.id}/search`}>
      <input
        type="search"
        name="q"
        aria-label="Search tests, runs and failure groups"
        placeholder="Search  /"
        aria-keyshortcuts="/"
        maxlength={200}
        autocomplete="off"
      />
    </form>
  );
}

/** The keyboard's shortcuts, shown by `?` (the script opens it; without the script no key is bound). */
function Shortcuts() {
  const keys: [ComponentChildren, string][] = [
    [<kbd>/</kbd>, 'Search the project'],
    [
      <>
        <kbd>j</kbd> <kbd>k</kbd>
      </>,
      'Next, previous row of the list',
    ],
    [<kbd>Enter</kbd>, 'Open the row'],
    [<kbd>?</kbd>, 'This list'],
    [<kbd>Esc</kbd>, 'Close'],
  ];
  return (
    <dialog class="shortcuts" id="shortcuts" aria-labelledby="shortcuts-title">
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {keys.map(([key, what]) => (
          <>
            <dt>{key}</dt>
            <dd>{what}</dd>
          </>
        ))}
      </dl>
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}

/** The signed-in person's menu: the navigation, the project's search, who is signed in and signing out. */
function Menu(props: { viewer: Viewer; project: ProjectRef | undefined }) {
  const { viewer, project } = props;
  return (
    <>
      <button type="button" class="menu-button" aria-expanded="false" aria-controls="site-menu" hidden>
        Menu
      </button>
      <div class="menu" id="site-menu">
        <nav class="main" aria-label="Main">
          <a href="/">Projects</a>
          {project ? <ProjectLinks project={project} /> : null}
        </nav>
        {project ? <SearchBox project={project} /> : null}
        <div class="account">
          <span class="muted who">{viewer.name || viewer.email}</span>
          <form method="post" action="/sign-out">
            <input type="hidden" name="_csrf" value={viewer.csrfToken} />
            <button type="submit">Sign out</button>
          </form>
        </div>
      </div>
    </>
  );
}

export interface PageProps {
  title: string;
  viewer: Viewer | null;
  project?: ProjectRef | undefined;
  children?: ComponentChildren;
}

/** A whole page: the header (logo, projects, the project's sections, sign out) and its content. */
export function Page(props: PageProps) {
  const { viewer, project } = props;
  const assets = dashboardAssets();
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {viewer ? <meta name="csrf-token" content={viewer.csrfToken} /> : null}
        {project ? <meta name="project-id" content={String(project.id)} /> : null}
        <link rel="icon" type="image/svg+xml" href="/favicon.svg" />
        <title>{`${props.title} · Proctor`}</title>
        <link rel="stylesheet" href={assets.style} />
        <script src={assets.script} defer></script>
      </head>
      <body>
        <header class="site">
          <a class="brand" href="/">
            <Logo />
          </a>
          {viewer ? <Menu viewer={viewer} project={project} /> : null}
        </header>
        <main>{props.children}</main>
        {viewer ? <Shortcuts /> : null}
      </body>
    </html>
  );
}

/** A page as the HTML document the server sends. */
export function renderPage(props: PageProps): string {
  return `<!doctype html>\n${renderHtml(<Page {...props} />)}`;
}
