import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { ROOT } from './playwright.ts';

const AXE_SOURCE = fs.readFileSync(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/**
 * axe-core's serious and critical violations on the page as it is now. Injected by Playwright's
 * own channel (a page's content security policy does not apply to it); @axe-core/playwright needs
 * Node 22.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run: (context: Document) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }> };
      }
    ).axe;
    const result = await axe.run(document);
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
