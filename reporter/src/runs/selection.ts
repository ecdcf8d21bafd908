import type { RunSelection } from './client.ts';

/** What an affected run ran, as `proctor-ci run --affected` says it: read from the typed fields, the same words as the run page. */
export function selectionLine(selection: RunSelection): string {
  const base = selection.base_commit ? selection.base_commit.slice(0, 12) : 'the last passing run';
  if (selection.mode === 'affected') return `${selection.left_out} test${selection.left_out === 1 ? '' : 's'} left out: not affected by changes since ${base}`;
  return `every test ran: ${selection.reason ?? 'no reason was recorded'}`;
}
