import { marked } from 'marked';

// Markdown as GitHub, GitLab or an assistant's client would show it: rendered by a real CommonMark
// and GFM renderer (marked, raw HTML passed through as GitHub's renderer does before it sanitizes,
// bare URLs autolinked), then read back as the elements, links, code and text that came out.

export interface Rendered {
  html: string;
  /** Every element's tag name, in order, and every HTML comment as `!--`. */
  tags: string[];
  /** Every link's target and text. */
  links: { href: string; text: string }[];
  /** The text of every inline code span and code block. */
  code: string[];
  /** The text a reader sees outside code and links, entities decoded, zero-width spaces kept. */
  prose: string;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

function decoded(html: string): string {
  return html.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] as string);
}

export function render(markdown: string): Rendered {
  const html = marked.parse(markdown, { async: false, gfm: true });
  const tags = [...html.matchAll(/<(!--|\/?[a-zA-Z][\w-]*)/g)].map((m) => (m[1] as string).toLowerCase()).filter((tag) => !tag.startsWith('/'));
  const links = [...html.matchAll(/<a\s[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/g)].map((m) => ({
    href: decoded(m[1] as string),
    text: decoded((m[2] as string).replace(/<[^>]*>/g, '')),
  }));
  const code = [...html.matchAll(/<code[^>]*>([\s\S]*?)<\/code>/g)].map((m) => decoded(m[1] as string));
  const prose = decoded(
    html
      .replace(/<code[^>]*>[\s\S]*?<\/code>/g, ' ')
      .replace(/<a\s[^>]*>[\s\S]*?<\/a>/g, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<[^>]*>/g, ' '),
  );
  return { html, tags, links, code, prose };
}

/**
 * What GitHub or GitLab would turn into a mention, a cross-reference or a link in text: `@name`
 * (GitLab's `@all` too), `#12`, `!12`, `&12`, `$12`, `GH-12`, a bare URL or `www.` address.
 */
export const LIVE_REFERENCE = /@[\p{L}\p{N}_-]|(^|[^\p{L}\p{N}_])[#!&$]\d|\bGH-\d|:\/\/|www\./iu;
