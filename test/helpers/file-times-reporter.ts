import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

// CI prints the test files that took longest (their tests, hooks and imports), so its budget is
// spent where the figures say (docs/decisions/ci-budget.md). Set PROCTOR_FILE_TIMES=N to see N.
export default class FileTimesReporter implements Reporter {
  private readonly times: { file: string; seconds: number }[] = [];

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    const seconds = (d.duration + d.collectDuration + d.setupDuration + d.prepareDuration) / 1000;
    this.times.push({ file: path.relative(process.cwd(), module.moduleId), seconds });
  }

  onTestRunEnd(): void {
    const count = Number(process.env.PROCTOR_FILE_TIMES ?? 0);
    if (!count || this.times.length === 0) return;
    const total = this.times.reduce((sum, t) => sum + t.seconds, 0);
    const slowest = [...this.times].sort((a, b) => b.seconds - a.seconds).slice(0, count);
    console.log(`\nSlowest test files (of ${this.times.length}, ${Math.round(total)} s of file time in all):`);
    for (const t of slowest) console.log(`  ${t.seconds.toFixed(1).padStart(7)} s  ${t.file}`);
  }
}
