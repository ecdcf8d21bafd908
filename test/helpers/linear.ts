import { readFileSync } from 'node:fs';
import {
  buildSchema,
  type DocumentNode,
  execute,
  type GraphQLFieldResolver,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  parse,
  validate,
} from 'graphql';
import { startJsonStandIn, type StandInRequest } from './stand-in.ts';

// Linear's API cannot be reached from here: a stand-in on loopback answers GraphQL at /graphql and
// records every request. Each document is parsed and validated against Linear's published schema
// (test/fixtures/linear/schema.graphql) with graphql's `validate`, and executed over that schema,
// which coerces its variables by their declared input types: a field, an argument, a filter or an
// input Linear does not have is an error, as Linear would answer it. The root fields Proctor calls
// are answered from the stand-in's issues; the fields the SDK's fragments select that the stand-in
// does not keep are answered with a value of their type.

export type LinearRequest = StandInRequest;

export interface LinearIssue {
  id: string;
  identifier: string;
  number: number;
  title: string;
  description: string;
  teamId: string;
  stateId: string;
  completedAt: string | null;
  canceledAt: string | null;
  comments: { id: string; body: string }[];
}

export interface LinearStandIn {
  /** Where PROCTOR_LINEAR_API_URL points: `http://127.0.0.1:PORT/graphql`. */
  url: string;
  requests: LinearRequest[];
  issues: LinearIssue[];
  /** The state type of an issue now: triage, backlog, unstarted, started, completed, canceled. */
  typeOf(issue: LinearIssue): string;
  /** A person marks the issue Done in Linear. */
  closeIssue(identifier: string): void;
  /** A person files an issue in the team, not through Proctor. */
  fileIssue(title: string, type: 'unstarted' | 'completed'): LinearIssue;
  /** The next `count` requests calling root field `field` are carried out, then answered 502 (the answer lost). */
  loseAnswersNext(field: string, count: number): void;
  close(): Promise<void>;
}

let schema: GraphQLSchema | null = null;
const linearSchema = () => (schema ??= buildSchema(readFileSync(new URL('../fixtures/linear/schema.graphql', import.meta.url), 'utf8')));

/** A value of a field's type, for the fields the stand-in does not keep. */
function valueOf(type: GraphQLOutputType): unknown {
  if (!isNonNullType(type)) return null;
  const inner = type.ofType;
  if (isListType(inner)) return [];
  if (isEnumType(inner)) return inner.getValues()[0]?.value;
  if (isObjectType(inner)) return {};
  if (isAbstractType(inner)) return { __typename: linearSchema().getPossibleTypes(inner)[0]?.name };
  const name = getNamedType(inner).name;
  if (name === 'Boolean') return false;
  if (name === 'Int' || name === 'Float') return 0;
  if (name === 'DateTime' || name === 'TimelessDate' || name === 'TimelessDateOrDuration') return '2026-01-01T00:00:00.000Z';
  if (name === 'JSON' || name === 'JSONObject') return {};
  return '';
}

const fieldResolver: GraphQLFieldResolver<Record<string, unknown>, unknown> = (source, args, context, info) => {
  const value = source?.[info.fieldName];
  if (typeof value === 'function') return (value as (a: unknown) => unknown)(args);
  return value === undefined ? valueOf(info.returnType) : value;
};

const PAGE = { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null };
const STATES = [
  { id: 'state-todo', name: 'Todo', type: 'unstarted' },
  { id: 'state-progress', name: 'In Progress', type: 'started' },
  { id: 'state-done', name: 'Done', type: 'completed' },
];

type Filter = Record<string, Record<string, unknown> | undefined>;
const matches = (text: string, comparator: Record<string, unknown> | undefined) =>
  comparator?.contains === undefined || text.includes(String(comparator.contains));

export async function startLinear(teamId = 'team-eng', teamKey = 'ENG'): Promise<LinearStandIn> {
  const issues: LinearIssue[] = [];
  const losing: { field: string; count: number }[] = [];
  let nextId = 1;
  const typeOf = (issue: LinearIssue) => STATES.find((s) => s.id === issue.stateId)?.type ?? 'unstarted';
  const file = (title: string, description: string, stateId: string) => {
    const number = issues.length + 1;
    const issue: LinearIssue = {
      id: `issue-${nextId++}`,
      identifier: `${teamKey}-${number}`,
      number,
      title,
      description,
      teamId,
      stateId,
      completedAt: stateId === 'state-done' ? new Date().toISOString() : null,
      canceledAt: null,
      comments: [],
    };
    issues.push(issue);
    return issue;
  };
  const byId = (id: string) => {
    const issue = issues.find((i) => i.id === id || i.identifier === id);
    if (!issue) throw new Error('Entity not found: Issue');
    return issue;
  };
  const shown = (issue: LinearIssue) => ({
    id: issue.id,
    identifier: issue.identifier,
    number: issue.number,
    title: issue.title,
    description: issue.description,
    url: `https://linear.app/acme/issue/${issue.identifier}/`,
    completedAt: issue.completedAt,
    canceledAt: issue.canceledAt,
    state: { id: issue.stateId },
    team: { id: issue.teamId },
  });
  const setState = (issue: LinearIssue, stateId: string) => {
    issue.stateId = stateId;
    issue.completedAt = stateId === 'state-done' ? new Date().toISOString() : null;
  };
  const root = {
    issues: ({ filter }: { filter?: Filter }) => ({
      nodes: issues
        .filter((i) => (!filter?.team || (filter.team as { id?: { eq?: string } }).id?.eq === i.teamId) && matches(i.description, filter?.description))
        .map(shown),
      pageInfo: PAGE,
    }),
    issue: ({ id }: { id: string }) => shown(byId(id)),
    issueCreate: ({ input }: { input: { teamId: string; title: string; description?: string } }) => {
      if (input.teamId !== teamId) throw new Error('Entity not found: Team');
      return { success: true, lastSyncId: nextId, issue: shown(file(input.title, input.description ?? '', 'state-todo')) };
    },
    issueUpdate: ({ id, input }: { id: string; input: { stateId?: string } }) => {
      const issue = byId(id);
      if (input.stateId) setState(issue, input.stateId);
      return { success: true, lastSyncId: nextId, issue: shown(issue) };
    },
    workflowState: ({ id }: { id: string }) => STATES.find((s) => s.id === id),
    workflowStates: ({ filter }: { filter?: Filter }) => ({
      nodes: STATES.filter((s) => (filter?.type as { eq?: string } | undefined)?.eq === undefined || s.type === (filter?.type as { eq?: string }).eq),
      pageInfo: PAGE,
    }),
    comments: ({ filter }: { filter?: Filter }) => {
      const issueId = (filter?.issue as { id?: { eq?: string } } | undefined)?.id?.eq;
      const on = issues.filter((i) => issueId === undefined || i.id === issueId);
      return { nodes: on.flatMap((i) => i.comments.filter((c) => matches(c.body, filter?.body))), pageInfo: PAGE };
    },
    commentCreate: ({ input }: { input: { issueId: string; body: string } }) => {
      const comment = { id: `comment-${nextId++}`, body: input.body };
      byId(input.issueId).comments.push(comment);
      return { success: true, lastSyncId: nextId, comment };
    },
  };
  const standIn = await startJsonStandIn((request) => {
    if (request.method !== 'POST' || request.path !== '/graphql') return [404, { errors: [{ message: 'not found' }] }];
    const { query, variables } = request.body as { query: string; variables?: Record<string, unknown> };
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      return [400, { errors: [{ message: (error as Error).message, extensions: { type: 'graphql error' } }] }];
    }
    const invalid = validate(linearSchema(), document);
    if (invalid.length > 0) return [400, { errors: invalid.map((e) => ({ message: e.message, extensions: { type: 'graphql error' } })) }];
    const result = execute({ schema: linearSchema(), document, rootValue: root, variableValues: variables, fieldResolver }) as {
      data?: unknown;
      errors?: { message: string }[];
    };
    const field = rootFieldOf(document);
    const lost = losing.find((l) => l.count > 0 && l.field === field);
    if (lost && !result.errors) {
      lost.count--;
      return [502, { errors: [{ message: 'Bad gateway' }] }];
    }
    return [
      200,
      result.errors
        ? { data: result.data ?? null, errors: result.errors.map((e) => ({ message: e.message, extensions: { type: 'invalid input', userError: true } })) }
        : { data: result.data },
    ];
  });
  return {
    url: `${standIn.origin}/graphql`,
    requests: standIn.requests,
    issues,
    typeOf,
    closeIssue: (identifier) => setState(byId(identifier), 'state-done'),
    fileIssue: (title, type) => file(title, 'filed by a person', type === 'completed' ? 'state-done' : 'state-todo'),
    loseAnswersNext(field, count) {
      losing.push({ field, count });
    },
    close: () => standIn.close(),
  };
}

/** The root field a document's operation calls. */
export function rootFieldOf(document: DocumentNode): string | undefined {
  const selection = getOperationAST(document)?.selectionSet.selections[0];
  return selection?.kind === 'Field' ? selection.name.value : undefined;
}

/** What is wrong with a recorded request by Linear's published schema; empty when nothing is. */
export function problemsWithLinearRequest(request: LinearRequest): string[] {
  if (request.method !== 'POST' || request.path !== '/graphql') return [`${request.method} ${request.path}: Linear's API is POST /graphql`];
  const { query, variables } = (request.body ?? {}) as { query?: string; variables?: Record<string, unknown> };
  if (typeof query !== 'string') return ['no GraphQL document'];
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch (error) {
    return [(error as Error).message];
  }
  const problems = validate(linearSchema(), document).map((e) => e.message);
  if (problems.length > 0) return problems;
  // Executed against an empty root: what is left are the variables' coercion errors, if any.
  const result = execute({ schema: linearSchema(), document, rootValue: {}, variableValues: variables, fieldResolver: () => null }) as {
    errors?: { message: string }[];
    data?: unknown;
  };
  return result.data === undefined ? (result.errors ?? []).map((e) => e.message) : [];
}
