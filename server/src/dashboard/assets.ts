/**
 * The dashboard's one script, served by Proctor (no CDN). A list that shows runs still under way
 * asks the API, with the session, for the same list every few seconds, and reloads once it changed.
 */
export const DASHBOARD_SCRIPT = `
(() => {
  const live = document.querySelector('[data-live-url]');
  if (!live) return;
  const url = live.getAttribute('data-live-url');
  const project = live.getAttribute('data-project');
  const shown = live.getAttribute('data-fingerprint');
  const poll = async () => {
    try {
      const response = await fetch(url, { headers: { 'x-project-id': project, accept: 'application/json' }, credentials: 'same-origin' });
      if (response.ok) {
        const body = await response.json();
        const now = body.data.test_runs.map((r) => r.id + ':' + r.state + ':' + r.total_count).join(',');
        if (now !== shown) { location.reload(); return; }
      }
    } catch (error) { /* the next poll tries again */ }
    setTimeout(poll, 2000);
  };
  setTimeout(poll, 2000);
})();
`;
