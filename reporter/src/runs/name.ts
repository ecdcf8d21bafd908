// How the reporter, proctor-ci and the GitHub Action name a run to a person: by its number in
// its project, as the dashboard does ("run #12"). The id is for URLs and the API; a line names
// the run by it only when the server has not said the number (an older server, or a run it refused).

/** `run #12`, or `run id 523` when the number is not known. */
export function runName(run: { id: number; number?: number | null }): string {
  return typeof run.number === 'number' ? `run #${run.number}` : `run id ${run.id}`;
}
