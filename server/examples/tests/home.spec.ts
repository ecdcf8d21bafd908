import { expect, test } from '@playwright/test';

test.describe('home page', () => {
  test('shows the shop title', { tag: '@smoke' }, async ({ page }) => {
    await page.goto('/');
    await expect(page).toHaveTitle('Acme Shop');
  });

  test('counts items added to the cart', { tag: ['@smoke', '@cart'] }, async ({ page }) => {
    await page.goto('/');
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await expect(page.locator('#count')).toHaveText('2');
  });

  // Fails on purpose: the page greets guests, not returning users.
  test('greets a returning user', { tag: '@regression' }, async ({ page }) => {
    await page.goto('/');
    await expect(page.locator('#banner')).toHaveText('Welcome back', { timeout: 1_000 });
  });
});
