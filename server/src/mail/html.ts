import { escapeXml } from '../xml.ts';

// A mail's HTML part: one plain column, inline styles (mail programs drop style sheets). Callers
// pass text, escaped here, or HTML they escaped themselves with `escapeHtml`.

export const escapeHtml = escapeXml;

/** A button-like link: its address and label escaped. */
export function mailButton(href: string, label: string): string {
  return `<p style="margin:24px 0"><a href="${escapeXml(href)}" style="display:inline-block;padding:10px 18px;border-radius:6px;background:#1f6feb;color:#ffffff;text-decoration:none;font-weight:600">${escapeXml(label)}</a></p>`;
}

/** A paragraph of text, escaped. */
export function mailParagraph(text: string, muted = false): string {
  return `<p style="margin:12px 0${muted ? ';color:#57606a;font-size:13px' : ''}">${escapeXml(text)}</p>`;
}

/** The whole HTML document around `body` (HTML), titled `title` (text). */
export function mailDocument(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeXml(title)}</title></head>
<body style="margin:0;padding:24px;font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;color:#1f2328;background:#ffffff">
<div style="max-width:640px;margin:0 auto">${body}
<p style="margin:32px 0 0;color:#57606a;font-size:12px">Sent by Proctor.</p></div></body></html>`;
}
