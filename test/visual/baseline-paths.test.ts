import { describe, expect, it } from 'vitest';
import { baselinePath, sanitizeForFilePath } from '../../server/src/visual/paths.ts';
import type { WireSnapshotLayout } from '../../reporter/src/api/wire.ts';

// Where Playwright looks for a baseline (its TestInfo's snapshot path): the template's tokens as
// Playwright fills them in, from the folders the reporter reports relative to the config's.

const layout = (projects: Partial<WireSnapshotLayout['projects'][number]>[], configDir = 'e2e'): WireSnapshotLayout => ({
  platform: 'linux',
  config_dir: configDir,
  projects: projects.map((p) => ({ name: 'chromium', test_dir: 'tests', snapshot_dir: 'tests', path_template: null, ...p })),
});

const snapshot = { filePath: 'tests/shop/cart.spec.ts', runnerProject: 'chromium', snapshotName: 'total', titles: ['cart', 'shows the total'] };

describe("a baseline's path in the repository", () => {
  it("when the project sets no template, then Playwright's default puts it beside the test file, the project and platform suffixed", () => {
    expect(baselinePath(layout([{}]), snapshot)).toEqual({ ok: true, path: 'e2e/tests/shop/cart.spec.ts-snapshots/total-chromium-linux.png' });
  });

  it('when the project is unnamed, then no project suffix; a name with spaces and dots is sanitized as Playwright does', () => {
    expect(baselinePath(layout([{ name: '' }]), { ...snapshot, runnerProject: '' })).toMatchObject({
      path: 'e2e/tests/shop/cart.spec.ts-snapshots/total-linux.png',
    });
    expect(sanitizeForFilePath('Mobile Safari 17.2')).toBe('Mobile-Safari-17-2');
    expect(baselinePath(layout([{ name: 'Mobile Safari 17.2' }]), { ...snapshot, runnerProject: 'Mobile Safari 17.2' })).toMatchObject({
      path: 'e2e/tests/shop/cart.spec.ts-snapshots/total-Mobile-Safari-17-2-linux.png',
    });
  });

  it('when snapshotDir is a folder of its own, then the test file path below testDir is kept under it', () => {
    expect(baselinePath(layout([{ snapshot_dir: '__screenshots__' }]), snapshot)).toMatchObject({
      path: 'e2e/__screenshots__/shop/cart.spec.ts-snapshots/total-chromium-linux.png',
    });
  });

  it('when the project has a template, then its tokens are filled in: testDir, platform, testFilePath, testFileBaseName, testName, arg, ext', () => {
    const template = '{testDir}/__screenshots__/{platform}{/projectName}/{testFilePath}/{testFileBaseName}/{testName}/{arg}{ext}';
    expect(baselinePath(layout([{ path_template: template }]), snapshot)).toMatchObject({
      path: 'e2e/tests/__screenshots__/linux/chromium/shop/cart.spec.ts/cart.spec/cart-shows-the-total/total.png',
    });
  });

  it('when the config is at the root and the snapshot name has folders, then the path starts at the root and keeps them', () => {
    expect(baselinePath(layout([{}], '.'), { ...snapshot, snapshotName: 'pages/home' })).toMatchObject({
      path: 'tests/shop/cart.spec.ts-snapshots/pages/home-chromium-linux.png',
    });
  });

  it('when the template leaves the repository or the project was not reported, then the path is not told, and why', () => {
    expect(baselinePath(layout([{ path_template: '../../outside/{arg}{ext}' }]), snapshot)).toEqual({
      ok: false,
      reason: "the baseline's path ../outside/total.png is outside the repository",
    });
    expect(baselinePath(layout([{ path_template: '/abs/{arg}{ext}' }]), snapshot)).toMatchObject({ ok: false });
    expect(baselinePath(layout([{}]), { ...snapshot, runnerProject: 'firefox' })).toEqual({
      ok: false,
      reason: 'the run\'s reporter did not report Playwright project "firefox"',
    });
  });
});
