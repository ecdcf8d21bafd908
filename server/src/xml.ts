const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The one escaping helper for text and attribute values in SVG and HTML. */
export function escapeXml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

/** Whether a URL may become a link: http(s) only, never `javascript:` or `data:`. */
export function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
