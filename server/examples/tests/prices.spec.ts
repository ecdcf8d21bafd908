import { expect, test } from '@playwright/test';

// Flaky on purpose: fails on the first try only, passes on the retry.
test('lists the prices', { tag: '@flaky' }, async ({ page }, testInfo) => {
  await page.goto('/');
  const expected = testInfo.retry === 0 ? 3 : 2;
  await expect(page.locator('#prices li')).toHaveCount(expected, { timeout: 1_000 });
});
