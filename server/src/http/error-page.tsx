import { renderToStaticMarkup } from 'preact-render-to-string';

// The page an error answers a person's browser with: a component like the dashboard's pages
// (escaped by the renderer), standing alone so that it loads nothing but its icon and needs no
// dashboard (an error may come before any of it, or from it).

const STYLE = 'body{font:14px/1.45 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1f2328;overflow-wrap:break-word}';

function ErrorPage(props: { title: string; message: string }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <link rel="icon" type="image/svg+xml" href="/favicon.svg" />
        <title>{`${props.title} · Proctor`}</title>
        <style>{STYLE}</style>
      </head>
      <body>
        <main>
          <h1>{props.title}</h1>
          <p role="alert">{props.message}</p>
          <p>
            <a href="/">Back to your projects</a>
          </p>
        </main>
      </body>
    </html>
  );
}

/** The error page as the document sent. */
export function renderErrorPage(title: string, message: string): string {
  return `<!doctype html>${renderToStaticMarkup(<ErrorPage title={title} message={message} />)}`;
}
