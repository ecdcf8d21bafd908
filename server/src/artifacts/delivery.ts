/**
 * How stored attachment bytes go back out. They are whatever a test attached, so they must never
 * become a document of the service's origin: images and video (never SVG) are shown inline with
 * their own type; everything else downloads as an attachment, HTML, SVG, XML and scripts as opaque
 * bytes. `nosniff` keeps browsers to that type, and the sandbox policy keeps script from running
 * should anything be rendered after all.
 */
const INLINE = new Map([
  ['image/png', 'png'],
  ['image/jpeg', 'jpg'],
  ['image/gif', 'gif'],
  ['image/webp', 'webp'],
  ['image/avif', 'avif'],
  ['video/webm', 'webm'],
  ['video/mp4', 'mp4'],
]);

const DOWNLOADED_AS_IS = new Map([
  ['application/zip', 'zip'],
  ['application/json', 'json'],
  ['application/octet-stream', 'bin'],
  ['text/plain', 'txt'],
  ['text/csv', 'csv'],
  ['application/pdf', 'pdf'],
]);

export const DOWNLOAD_POLICY = "default-src 'none'; img-src 'self'; media-src 'self'; sandbox";

function baseType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** Whether the run page may show the attachment in place (an image or a video). */
export function showsInline(contentType: string): boolean {
  return INLINE.has(baseType(contentType));
}

/** The name a download is saved under: the attachment's, with its type's extension when it has none. */
function fileName(name: string, extension: string | undefined): string {
  return extension && !/\.[a-z0-9]{1,8}$/i.test(name) ? `${name}.${extension}` : name;
}

export function deliveryHeaders(name: string, contentType: string, sizeBytes: number) {
  const base = baseType(contentType);
  const inline = INLINE.get(base);
  const asIs = DOWNLOADED_AS_IS.get(base);
  const type = inline ? base : asIs ? (base.startsWith('text/') ? `${base}; charset=utf-8` : base) : 'application/octet-stream';
  const disposition = inline ? 'inline' : 'attachment';
  return {
    'content-type': type,
    'content-length': String(sizeBytes),
    'content-disposition': `${disposition}; filename*=UTF-8''${encodeURIComponent(fileName(name, inline ?? asIs))}`,
    'x-content-type-options': 'nosniff',
    'content-security-policy': DOWNLOAD_POLICY,
    'cache-control': 'private, max-age=3600',
  };
}
