/** The types of build-dashboard.mjs, for the tests that call it. */
export const CLIENT_DIR: string;
export const ASSETS_DIR: string;
export function buildDashboardAssets(options?: { clientDir?: string; outDir?: string }): Promise<Record<string, string>>;
