// The content types `proctor-ci upload junit` gives the files a JUnit report names, held against
// how the server delivers stored bytes: the reporter package cannot import the server's table, so
// the two are checked against each other here.
import { describe, expect, it } from 'vitest';
import { ATTACHMENT_TYPES } from '../../reporter/src/cli/upload-attachments.ts';
import { deliveryHeaders, showsInline } from '../../server/src/artifacts/delivery.ts';

/** Types the server has no reason to show or name: their bytes download as they are, typed as bytes. */
const DOWNLOADED_AS_BYTES = new Set(['text/markdown']);

describe('the content types of JUnit attachments', () => {
  it.each(Object.entries(ATTACHMENT_TYPES))('when a file %s is sent as %s, then the server delivers it as that type', (extension, type) => {
    const delivered = deliveryHeaders(`file${extension}`, type, 1)['content-type'].split(';')[0];
    expect(delivered).toBe(DOWNLOADED_AS_BYTES.has(type) ? 'application/octet-stream' : type);
  });

  it('when a screenshot or a video is sent, then the run page shows it in place', () => {
    for (const extension of ['.png', '.jpg', '.jpeg', '.webm', '.mp4']) expect(showsInline(ATTACHMENT_TYPES[extension] as string), extension).toBe(true);
  });
});
