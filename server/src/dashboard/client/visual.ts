import { type VisualCounts, visualSummary } from '../visual-summary.ts';
import { api } from './api.ts';

// The review page of a run's visual changes (dashboard/visual-page.ts): the three views, the
// overlay's slider, zoom, the changed areas' boxes, and the keys: j or → next, k or ← previous,
// a approve, r reject (the change in focus).

type Counts = VisualCounts;

/** As the pages say it (../visual-summary.ts). */
const summaryOf = (counts: Counts): string => visualSummary(counts) ?? 'No visual change in this run.';

/** Places each box over its image, in percentages of the image's size (no inline style in the markup: the policy forbids it). */
function placeBoxes(change: HTMLElement): void {
  const width = Number(change.dataset.width);
  const height = Number(change.dataset.height);
  if (!width || !height) return;
  for (const box of change.querySelectorAll<HTMLElement>('[data-box]')) {
    const [x, y, w, h] = (box.dataset.box ?? '').split(',').map(Number) as [number, number, number, number];
    box.style.left = `${(x / width) * 100}%`;
    box.style.top = `${(y / height) * 100}%`;
    box.style.width = `${(w / width) * 100}%`;
    box.style.height = `${(h / height) * 100}%`;
  }
}

function showView(change: HTMLElement, view: string): void {
  for (const button of change.querySelectorAll<HTMLButtonElement>('[data-view-button]'))
    button.setAttribute('aria-pressed', String(button.dataset.viewButton === view));
  for (const part of change.querySelectorAll<HTMLElement>('.visual-view')) part.hidden = part.dataset.view !== view;
}

function slide(change: HTMLElement, value: number): void {
  const image = change.querySelector<HTMLElement>('.overlay-new');
  if (image) image.style.clipPath = `inset(0 0 0 ${value}%)`;
}

function zoom(change: HTMLElement, value: string): void {
  const width = Number(change.dataset.width);
  for (const frame of change.querySelectorAll<HTMLElement>('.frame')) {
    if (value === 'fit' || !width) {
      frame.style.width = '';
      frame.classList.remove('zoomed');
    } else {
      frame.style.width = `${width * Number(value)}px`;
      frame.classList.add('zoomed');
    }
  }
}

async function review(change: HTMLElement, decision: 'approved' | 'rejected'): Promise<void> {
  const list = change.closest<HTMLElement>('[data-visual-run]');
  const problem = change.querySelector<HTMLElement>('.visual-review .problem');
  if (!list || !change.querySelector('[data-review]')) return;
  if (problem) problem.textContent = '';
  const response = await api('POST', `/api/test-runs/${list.dataset.visualRun}/visual-changes/review`, {
    review: decision,
    ids: [Number(change.dataset.change)],
  });
  const answer = (await response.json().catch(() => null)) as {
    data?: { counts: Counts; visual_changes: { id: number; review: string; reviewed_by: string | null; reviewed_at: string | null }[] };
    error?: { message?: string };
  } | null;
  if (!response.ok || !answer?.data) {
    if (problem) problem.textContent = answer?.error?.message ?? `The review failed (${response.status})`;
    return;
  }
  const updated = answer.data.visual_changes.find((c) => c.id === Number(change.dataset.change));
  if (updated) {
    change.dataset.state = updated.review;
    const state = change.querySelector('.review-state');
    const when = updated.reviewed_at ? ` on ${updated.reviewed_at.slice(0, 16).replace('T', ' ')} UTC` : '';
    if (state) state.textContent = `${updated.review === 'approved' ? 'Approved' : 'Rejected'} by ${updated.reviewed_by ?? 'someone'}${when}`;
  }
  const summary = document.querySelector('[data-visual-summary]');
  if (summary) summary.textContent = summaryOf(answer.data.counts);
}

function move(changes: HTMLElement[], by: number): void {
  const at = changes.findIndex((change) => change.contains(document.activeElement));
  const next = changes[Math.min(changes.length - 1, Math.max(0, at < 0 ? 0 : at + by))];
  next?.focus();
  next?.scrollIntoView({ block: 'start' });
}

/** Wires the review page, when the document is one. */
export function reviewVisualChanges(doc: Document): void {
  const changes = [...doc.querySelectorAll<HTMLElement>('.visual-change')];
  if (changes.length === 0) return;
  for (const change of changes) {
    placeBoxes(change);
    slide(change, 50);
    for (const button of change.querySelectorAll<HTMLButtonElement>('[data-view-button]'))
      button.addEventListener('click', () => showView(change, button.dataset.viewButton ?? 'side'));
    change
      .querySelector<HTMLInputElement>('[data-slider]')
      ?.addEventListener('input', (event) => slide(change, Number((event.target as HTMLInputElement).value)));
    change.querySelector<HTMLSelectElement>('[data-zoom]')?.addEventListener('change', (event) => zoom(change, (event.target as HTMLSelectElement).value));
    for (const button of change.querySelectorAll<HTMLButtonElement>('[data-review]'))
      button.addEventListener('click', () => void review(change, button.dataset.review as 'approved' | 'rejected'));
  }
  doc.addEventListener('keydown', (event) => {
    const target = event.target as HTMLElement;
    if (event.ctrlKey || event.metaKey || event.altKey || target.closest('input, select, textarea')) return;
    const current = changes.find((change) => change.contains(doc.activeElement)) ?? null;
    if (event.key === 'j' || event.key === 'ArrowRight') move(changes, 1);
    else if (event.key === 'k' || event.key === 'ArrowLeft') move(changes, -1);
    else if ((event.key === 'a' || event.key === 'r') && current) void review(current, event.key === 'a' ? 'approved' : 'rejected');
    else return;
    event.preventDefault();
  });
}
