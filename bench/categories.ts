// How well failures are sorted by kind: the categories decided for the corpus of real Playwright
// failures labelled by hand (test/fixtures/category-corpus.json), against those labels; and, as the
// baseline measured in the same run, the same decided from the error's message alone (what a
// reporter that sends no steps gives). Targets: 90% agreement, at most 5% unknown.
// `npx tsx bench/categories.ts`.
import corpus from '../test/fixtures/category-corpus.json' with { type: 'json' };
import { FAILURE_CATEGORIES, type FailedStep, failureCategory } from '../server/src/failuregroups/category.ts';

interface Labelled {
  label: string;
  message: string;
  stack: string | null;
  steps: FailedStep[];
}

const failures = corpus as Labelled[];
const started = performance.now();
const withSteps = failures.map((f) => failureCategory({ message: f.message, stack: f.stack, steps: f.steps }));
const elapsed = performance.now() - started;
const messageOnly = failures.map((f) => failureCategory({ message: f.message, stack: f.stack }));

const share = (decided: string[], keep: (category: string, i: number) => boolean) => decided.filter(keep).length / failures.length;
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
const agreement = share(withSteps, (category, i) => category === failures[i]?.label);
const unknown = share(withSteps, (category) => category === 'unknown');
const baseline = share(messageOnly, (category, i) => category === failures[i]?.label);

console.log(`bench/categories: ${failures.length} real Playwright failures labelled by hand`);
console.log('  category     labelled  agreeing');
for (const category of FAILURE_CATEGORIES) {
  const indexes = failures.flatMap((f, i) => (f.label === category ? [i] : []));
  const agreeing = indexes.filter((i) => withSteps[i] === category).length;
  console.log(`  ${category.padEnd(12)} ${String(indexes.length).padStart(8)}  ${String(agreeing).padStart(8)}`);
}
console.log(`  agreement with the labels: ${pct(agreement)} (target 90%); unknown: ${pct(unknown)} (target at most 5%)`);
console.log(`  from the message alone (no steps): ${pct(baseline)}; the steps add ${((agreement - baseline) * 100).toFixed(1)} points`);
console.log(`  ${((elapsed / failures.length) * 1000).toFixed(1)} µs a failure`);
const met = agreement >= 0.9 && unknown <= 0.05;
console.log(`  target: ${met ? 'met' : 'NOT met'}`);
if (!met) process.exitCode = 1;
