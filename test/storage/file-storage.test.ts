import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStorage } from '../../server/src/storage/blobs.ts';

// A request body reaches the storage only after the handler has looked its row up: a client that
// went away meanwhile has a body that already emitted its last event.

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-file-storage-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('files written from a stream', () => {
  it('when the stream was destroyed before the write began, then the write fails at once and leaves no file', async () => {
    const storage = new FileStorage(root);
    const body = new PassThrough();
    body.write(Buffer.alloc(100));
    const closed = new Promise((resolve) => body.once('close', resolve));
    body.once('error', () => undefined);
    body.destroy(new Error('aborted'));
    await closed;
    const key = storage.newKey();
    // Without the check, this write waited for an event that had passed: the test timed out.
    await expect(storage.write(key, body, { maxBytes: 1000, exactBytes: 1000 })).rejects.toThrow('aborted');
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('when the stream is cut off midway, then the write fails and leaves no file', async () => {
    const storage = new FileStorage(root);
    const body = new PassThrough();
    const writing = storage.write(storage.newKey(), body, { maxBytes: 1000, exactBytes: 1000 });
    body.write(Buffer.alloc(100));
    setTimeout(() => body.destroy(), 20);
    await expect(writing).rejects.toThrow();
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('when the whole stream arrives, then the file holds it under its key', async () => {
    const storage = new FileStorage(root);
    const key = storage.newKey();
    await expect(storage.write(key, Readable.from([Buffer.alloc(600), Buffer.alloc(400)]), { maxBytes: 1000, exactBytes: 1000 })).resolves.toBe(1000);
    expect(fs.readdirSync(root)).toEqual([key]);
    await storage.remove(key);
  });
});
