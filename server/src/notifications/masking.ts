// A Slack incoming-webhook URL is itself the credential that posts to its channel, and a webhook URL
// may carry one (user:password@, ?token=…). Such URLs are write-only, like secrets and tokens:
// answers, pages and logs show them masked.

export const MASK = '••••';

/** Query parameters whose value is taken for a credential. */
const SECRET_PARAMETER = /(token|secret|key|pass|pwd|auth|sig|credential|session|code)/i;

export interface MaskedUrl {
  url: string;
  /** Whether anything was masked: the URL carries a credential. */
  masked: boolean;
}

/** `https://hooks.slack.com/services/T…/B…/••••`: the workspace and channel ids' first letters, the secret never. */
function maskSlackPath(path: string): string {
  const segments = path.split('/').filter(Boolean);
  if (segments.length === 0) return `/${MASK}`;
  const [first, ...rest] = segments as [string, ...string[]];
  if (rest.length === 0) return `/${MASK}`;
  const ids = rest.slice(0, -1).map((segment) => `${segment.slice(0, 1)}…`);
  return `/${[first, ...ids, MASK].join('/')}`;
}

/** The URL as an answer or a page may show it, for a destination of `type`. */
export function maskReceiverUrl(type: string, url: string): MaskedUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url: MASK, masked: true };
  }
  let masked = false;
  if (parsed.username || parsed.password) {
    parsed.username = MASK;
    parsed.password = '';
    masked = true;
  }
  for (const name of [...new Set(parsed.searchParams.keys())]) {
    if (!SECRET_PARAMETER.test(name)) continue;
    parsed.searchParams.set(name, MASK);
    masked = true;
  }
  if (parsed.hash) {
    parsed.hash = MASK;
    masked = true;
  }
  if (type === 'slack') {
    parsed.pathname = maskSlackPath(parsed.pathname);
    masked = true;
  }
  // URL encodes the mask's bullets and ellipses; shown as they are, they read as a mask.
  return { url: decodeMask(parsed.toString()), masked };
}

function decodeMask(text: string): string {
  return [MASK, '…'].reduce((shown, mark) => shown.split(encodeURIComponent(mark)).join(mark), text);
}
