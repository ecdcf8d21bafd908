import type { NotifySettings } from '../config.ts';
import type { Tx } from '../db.ts';
import { InvalidInputError } from '../errors.ts';
import { checkReceiverUrl, type ReceiverPolicy } from '../outbound/addresses.ts';
import { unboundProblem } from './credentials.ts';
import type { DestinationUpdate, NewDestination } from './schema.ts';
import type { StoredDestination } from './store.ts';
import { knownEnvironments } from './store.ts';

type Shape = Pick<StoredDestination, 'type' | 'url' | 'repo' | 'project' | 'recipients' | 'channel' | 'secret' | 'token' | 'environments'>;

/** What the server offers destinations: its GitHub App, its GitLab token, its mail (PROCTOR_SMTP_URL). */
export interface ServerOffers {
  githubApp: boolean;
  gitlabToken: boolean;
  mail: boolean;
}

/**
 * What each type takes: a URL (Slack's incoming webhook, Teams, webhook) or a channel and a bot token
 * (Slack's chat.postMessage), a repository and a token (GitHub) or a project and
 * a token (GitLab), the token left out where the server has its own (its App, its GitLab token); a
 * secret for webhooks only.
 */
function problemOf(d: Shape, server: ServerOffers): string | null {
  if (d.project !== null && d.type !== 'gitlab') return 'body.project: only a gitlab destination has a project';
  if (d.recipients !== null && d.type !== 'email') return 'body.recipients: only an email destination has recipients';
  if (d.channel !== null && d.type !== 'slack') return 'body.channel: only a slack destination has a channel';
  if (d.type === 'slack' && (d.channel !== null || d.token !== null)) {
    // A Slack app's bot token and a channel or user id, posted with chat.postMessage: the second kind of Slack destination.
    if (d.url !== null) return 'body.url: a slack destination by bot token has no url (give channel and token, or only url for an incoming webhook)';
    if (d.channel === null) return 'body.channel: required with a token (a Slack channel id C…/G… or user id U…/W…)';
    if (d.token === null) return "body.token: required with a channel (the Slack app's bot token, xoxb-…, with the chat:write scope)";
    if (d.repo !== null) return 'body.repo: only a github destination has a repo';
    if (d.secret !== null) return 'body.secret: a slack destination has no secret (its token is the secret)';
    return null;
  }
  if (d.type === 'email') {
    if (!server.mail) return 'body.type: this server sends no mail (its operator has not set PROCTOR_SMTP_URL): an email destination would tell nobody';
    if (d.recipients === null) return 'body.recipients: required for an email destination (the addresses to mail)';
    if (d.url !== null) return 'body.url: an email destination has no url (give recipients)';
    if (d.repo !== null) return 'body.repo: an email destination has no repo (give recipients)';
    if (d.token !== null) return 'body.token: only a github, gitlab or slack destination has a token';
    if (d.secret !== null) return 'body.secret: only a webhook destination has a secret';
    return null;
  }
  if (d.type === 'gitlab') {
    if (d.url !== null) return 'body.url: a gitlab destination has no url (give project)';
    if (d.repo !== null) return 'body.repo: a gitlab destination has no repo (give project)';
    if (d.project === null) return "body.project: required for a gitlab destination (the project's path, group/name, or its id)";
    if (d.token === null && !server.gitlabToken)
      return 'body.token: required for a gitlab destination (a token with the api scope; the server has no GitLab token: PROCTOR_GITLAB_TOKEN)';
    if (d.secret !== null) return 'body.secret: only a webhook destination has a secret';
    return null;
  }
  if (d.type === 'github') {
    if (d.url !== null) return 'body.url: a github destination has no url (give repo)';
    if (d.repo === null) return 'body.repo: required for a github destination (owner/name)';
    if (d.token === null && !server.githubApp) return 'body.token: required for a github destination (the server has no GitHub App: PROCTOR_GITHUB_APP_ID)';
    if (d.secret !== null) return 'body.secret: only a webhook destination has a secret';
    return null;
  }
  if (d.url === null) return `body.url: required for a ${d.type} destination`;
  if (d.repo !== null) return `body.repo: only a github destination has a repo`;
  if (d.token !== null) return 'body.token: only a github, gitlab or slack destination has a token';
  if ((d.type === 'slack' || d.type === 'teams') && d.secret !== null) return `body.secret: a ${d.type} destination has no secret (its URL is the secret)`;
  return null;
}

/**
 * The destination as it would be stored is whole (a GitHub one without a token needs the server's
 * App, a GitLab one the server's token), uses the server's credential only on a repository bound
 * to the project, and names the project's environments.
 */
export async function checkDestination(
  sql: Tx,
  projectId: number,
  d: Shape,
  settings: Pick<NotifySettings, 'githubApp' | 'gitlabToken'>,
  mail: boolean,
): Promise<void> {
  const problem = problemOf(d, { githubApp: settings.githubApp !== null, gitlabToken: settings.gitlabToken !== null, mail });
  if (problem) throw new InvalidInputError(problem);
  const unbound = await unboundProblem(sql, projectId, d);
  if (unbound) throw new InvalidInputError(`body.${unbound.field}: ${unbound.message}`);
  const known = await knownEnvironments(sql, projectId, d.environments);
  const unknown = d.environments.findIndex((slug) => !known.has(slug));
  if (unknown >= 0) throw new InvalidInputError(`body.environments.${unknown}: no environment with slug "${d.environments[unknown]}" in this project`);
}

/** A receiver URL given in a request reaches no forbidden address (checked again at each delivery). */
export async function checkReceiver(url: string | undefined, receivers: ReceiverPolicy): Promise<void> {
  if (url === undefined) return;
  const problem = await checkReceiverUrl(url, receivers);
  if (problem) throw new InvalidInputError(`body.url: ${problem}`);
}

export function shapeOfNew(given: NewDestination): Shape {
  return {
    type: given.type,
    url: given.url ?? null,
    repo: given.repo ?? null,
    project: given.project ?? null,
    recipients: given.recipients ?? null,
    channel: given.channel ?? null,
    secret: given.secret ?? null,
    token: given.token ?? null,
    environments: given.environments,
  };
}

export function shapeAfter(current: StoredDestination, change: DestinationUpdate): Shape {
  return {
    type: current.type,
    url: change.url === undefined ? current.url : change.url,
    repo: change.repo === undefined ? current.repo : change.repo,
    project: change.project === undefined ? current.project : change.project,
    recipients: change.recipients === undefined ? current.recipients : change.recipients,
    channel: change.channel === undefined ? current.channel : change.channel,
    secret: change.secret === undefined ? current.secret : change.secret,
    token: change.token === undefined ? current.token : change.token,
    environments: change.environments ?? current.environments,
  };
}
