import { escapeXml as e } from '../xml.ts';

/**
 * A test's owners as a line under its title: each a link to the list it is on, filtered to that
 * owner (`?owner=`); nothing when the test has none.
 */
export function ownersLine(owners: readonly string[], listPath: string): string {
  if (owners.length === 0) return '';
  const links = owners.map((owner) => `<a class="owner" href="${e(`${listPath}?owner=${encodeURIComponent(owner)}`)}">${e(owner)}</a>`);
  return `<div class="owners muted">Owners: ${links.join(' ')}</div>`;
}
