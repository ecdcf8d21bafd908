import type { TestCase, TestResult } from '@playwright/test/reporter';
import type { ArtifactMode } from '../api/wire.ts';

/** An attachment of one attempt as Playwright reported it: a file it wrote, or bytes in memory. */
export interface AttemptAttachment {
  test_id: string;
  retry: number;
  name: string;
  content_type: string;
  path: string | null;
  body: Buffer | null;
}

/**
 * Holds each test's attachments until its last attempt ends: only then does its outcome say
 * whether they go (`failures`: every attempt of a failed or flaky test).
 */
export class AttachmentCollector {
  private readonly held = new Map<string, AttemptAttachment[]>();

  constructor(private readonly mode: ArtifactMode) {}

  /** The attempt's attachments are kept; returns the test's attachments to upload once `final`. */
  collect(test: TestCase, result: TestResult, final: boolean): AttemptAttachment[] {
    if (this.mode === 'none') return [];
    const own = result.attachments
      .filter((attachment) => attachment.path || attachment.body)
      .map((attachment) => ({
        test_id: test.id,
        retry: result.retry,
        name: attachment.name,
        content_type: attachment.contentType,
        path: attachment.path ?? null,
        body: attachment.path ? null : (attachment.body ?? null),
      }));
    const all = [...(this.held.get(test.id) ?? []), ...own];
    if (!final) {
      if (all.length > 0) this.held.set(test.id, all);
      return [];
    }
    this.held.delete(test.id);
    const outcome = test.outcome();
    return this.mode === 'all' || outcome === 'unexpected' || outcome === 'flaky' ? all : [];
  }
}
