// The visual review page is visual-changes-page.tsx. This module stays for the run page, which
// imports the visual changes' line from here.
export { visualSummary } from './visual-summary.ts';
