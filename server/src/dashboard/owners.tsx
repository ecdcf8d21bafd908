import { joined } from './components/html.ts';

/**
 * A test's owners as a line under its title: each a link to the list it is on, filtered to that
 * owner (`?owner=`); nothing when the test has none.
 */
export function Owners(props: { owners: readonly string[]; listPath: string }) {
  if (props.owners.length === 0) return null;
  const links = props.owners.map((owner) => (
    <a class="owner" href={`${props.listPath}?owner=${encodeURIComponent(owner)}`}>
      {owner}
    </a>
  ));
  return <div class="owners muted">Owners: {joined(links, ' ')}</div>;
}
