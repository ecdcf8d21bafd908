import { type Browser, chromium } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderAs } from '../../server/src/dashboard/permissions.ts';
import * as analytics from '../../server/src/dashboard/analytics-page.tsx';
import * as compare from '../../server/src/dashboard/compare-page.tsx';
import * as environments from '../../server/src/dashboard/environments-page.tsx';
import * as flaky from '../../server/src/dashboard/flaky-page.tsx';
import * as groups from '../../server/src/dashboard/groups-page.tsx';
import * as search from '../../server/src/dashboard/search-page.tsx';
import * as run from '../../server/src/dashboard/run-page.tsx';
import * as snoozes from '../../server/src/dashboard/snoozes-page.tsx';
import * as team from '../../server/src/dashboard/team-pages.tsx';
import * as tests from '../../server/src/dashboard/tests-page.tsx';
import * as digest from '../../server/src/dashboard/digest-page.tsx';
import { h } from 'preact';
import { renderHtml } from '../../server/src/dashboard/components/html.ts';
import { RunTimeline } from '../../server/src/dashboard/components/run-timeline.tsx';
import * as entry from '../../server/src/dashboard/pages.tsx';
import * as settings from '../../server/src/dashboard/settings-page.tsx';
import * as visual from '../../server/src/dashboard/visual-changes-page.tsx';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { HOSTILE, hostilePages, type PageModules } from './hostile-pages.ts';

// The pages written as components (docs/decisions/server-jsx.md), each rendered with a hostile text
// in every field a person or a suite supplies, then loaded in Chromium: the text stays text. No
// element or attribute is made from it, no script of it runs (an alert would open a dialog), and
// each field's text is read back whole from the page.

const modules: PageModules = {
  testsPage: tests.testsPage,
  testPage: tests.testPage,
  flakyTestsPage: flaky.flakyTestsPage,
  groupsPage: groups.groupsPage,
  groupPage: groups.groupPage,
  snoozesPage: snoozes.snoozesPage,
  searchPage: search.searchPage,
  analyticsPage: analytics.analyticsPage,
  environmentsPage: environments.environmentsPage,
  membersPage: team.membersPage,
  keysPage: team.keysPage,
  auditPage: team.auditPage,
  runPage: run.runPage,
  comparePage: compare.comparePage,
  visualPage: visual.visualPage,
  settingsPage: settings.settingsPage,
  digestPage: digest.digestPage,
  runTimelineSection: (project, timeline) => renderHtml(h(RunTimeline, { projectId: project.id, timeline })),
  signInPage: entry.signInPage,
  projectsPage: entry.projectsPage,
  runsPage: entry.runsPage,
};

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
});
afterAll(async () => {
  await browser?.close();
});

interface Found {
  /** Every element's tag and attribute names, once each. */
  tags: string[];
  attributes: string[];
  /** The images and scripts, by their source. */
  sources: string[];
  /** How many text nodes and attribute values hold the hostile text whole. */
  whole: number;
}

async function inspect(html: string): Promise<{ found: Found; dialogs: string[] }> {
  const context = await browser.newContext({ javaScriptEnabled: true });
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  // Nothing is fetched: the page's own script and stylesheet are not needed to read its markup.
  await page.route('**/*', (route) => route.abort());
  await page.setContent(html, { waitUntil: 'domcontentloaded' });
  // An image's onerror would run once its load failed.
  await page.waitForTimeout(50);
  const found = await page.evaluate((hostile) => {
    const tags = new Set<string>();
    const attributes = new Set<string>();
    const sources: string[] = [];
    let whole = 0;
    for (const element of document.querySelectorAll('*')) {
      tags.add(element.localName);
      for (const attribute of element.attributes) {
        attributes.add(attribute.name);
        if (attribute.value.includes(hostile)) whole++;
      }
      if (element.localName === 'img' || element.localName === 'script') sources.push(`${element.localName} ${element.getAttribute('src')}`);
    }
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.textContent?.includes(hostile)) whole++;
    return { tags: [...tags].sort(), attributes: [...attributes].sort(), sources, whole };
  }, HOSTILE);
  await context.close();
  return { found, dialogs };
}

describe('the pages written as components, given hostile values', () => {
  for (const role of ['admin', 'viewer'] as const) {
    it(`when each is rendered for a${role === 'admin' ? 'n' : ''} ${role} with markup in every supplied field, then Chromium finds no element, attribute or script made of it`, async () => {
      const pages = await renderAs(role, async () => hostilePages(modules));
      expect(Object.keys(pages).length).toBeGreaterThanOrEqual(27);
      for (const [name, html] of Object.entries(pages)) {
        const { found, dialogs } = await inspect(html);
        expect(dialogs, name).toEqual([]);
        // The only script is the dashboard's own file; the only images the environments' badges and
        // the run's screenshots (their signed URLs, the hostile text percent-encoded in the query) and
        // the visual changes' screenshots.
        expect(
          found.sources.filter(
            (source) =>
              !/^script \/assets\/dashboard-[\w-]+\.js$/.test(source) &&
              !/^img \/badges\/7\//.test(source) &&
              !/^img \/attachments\/\d\?[^<>"' ]+$/.test(source) &&
              !/^img \/media\//.test(source),
          ),
          name,
        ).toEqual([]);
        expect(
          found.attributes.filter((attribute) => /^on|[^\w:-]/.test(attribute)),
          name,
        ).toEqual([]);
        // The hostile text is on the page as text (or an attribute's value), whole, in many places.
        expect(found.whole, name).toBeGreaterThanOrEqual(3);
      }
    });
  }

  it('when a hostile page is served as text, then its markup holds no tag of the hostile text', async () => {
    const pages = await renderAs('admin', async () => hostilePages(modules));
    for (const [name, html] of Object.entries(pages)) {
      expect(html, name).not.toContain('<img src=x');
      expect(html, name).not.toContain('<script>alert');
    }
  });
});
