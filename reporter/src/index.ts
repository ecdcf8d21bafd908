// The package's entry, `@proctor/reporter`: the Playwright reporter (reporter/reporter.ts), as a
// playwright.config names it, and the failure signature the server groups failures by.
export { default } from './reporter/reporter.ts';
export type { ProctorReporterOptions } from './reporter/settings.ts';
export { failureSignature, failureMode } from './text/signature.ts';
