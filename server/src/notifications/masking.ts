// A destination's URL is taken for a credential as a whole: Discord (/api/webhooks/ID/TOKEN),
// Mattermost (/hooks/KEY), Microsoft Teams (…webhook.office.com/webhookb2/… for the retired
// connectors; a Workflows webhook, …/workflows/ID/triggers/manual/paths/invoke?…&sig=SIGNATURE,
// on logic.azure.com or api.powerplatform.com), Rocket.Chat (/hooks/ID/TOKEN) and Slack
// (/services/T…/B…/SECRET) put theirs in the path or the query, others in user:password@, the
// query or the fragment. Such URLs are write-only, like secrets and tokens:
// answers, the dashboard, the audit trail (which records the API's view) and logs show the scheme
// and host alone, unless the destination's type says which part is public (Slack's hooks.slack.com
// paths: `/services/` and the first letter of its ids, never the secret).

export const MASK = '••••';

/** Query parameters whose value is taken for a credential. */
const SECRET_PARAMETER = /(token|secret|key|pass|pwd|auth|sig|credential|session|code)/i;

export interface MaskedUrl {
  url: string;
  /**
   * Whether the URL carries a credential that Proctor recognises (user:password@, a query parameter
   * named like a secret, a fragment, a Slack webhook's path): the API's `has_secret` says so. The
   * URL is shown masked whether or not it does.
   */
  masked: boolean;
}

/** Hosts whose URLs a `slack` destination shows beyond the host: Slack's own incoming webhooks. */
const SLACK_HOSTS = new Set(['hooks.slack.com', 'hooks.slack-gov.com']);

/** `/services/T…/B…/••••`: the workspace and channel ids' first letters, the secret never. */
function slackPath(path: string): string {
  const segments = path.split('/').filter(Boolean);
  if (segments[0] !== 'services' || segments.length < 2) return `/${MASK}`;
  const ids = segments.slice(1, -1).map((segment) => `${segment.slice(0, 1)}…`);
  return `/${['services', ...ids, MASK].join('/')}`;
}

/** Whether `url` carries a credential that can be told from its shape alone. */
function carriesKnownCredential(type: string, url: URL): boolean {
  if (url.username || url.password || url.hash) return true;
  if ([...url.searchParams.keys()].some((name) => SECRET_PARAMETER.test(name))) return true;
  // Slack's and Teams' URLs are the credential whatever their shape (a Workflows URL signs its query with `sig`).
  return type === 'slack' || type === 'teams';
}

/** The URL as an answer, a page, the audit trail or a log may show it, for a destination of `type`. */
export function maskReceiverUrl(type: string, url: string): MaskedUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url: MASK, masked: true };
  }
  const masked = carriesKnownCredential(type, parsed);
  // `host` keeps a port; user:password@, the path, the query and the fragment go.
  const origin = `${parsed.protocol}//${parsed.host}`;
  const path = type === 'slack' && SLACK_HOSTS.has(parsed.hostname) ? slackPath(parsed.pathname) : `/${MASK}`;
  return { url: `${origin}${path}`, masked };
}
