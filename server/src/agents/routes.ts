import { z } from 'zod';
import { actorOf } from '../audit/index.ts';
import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { runParams } from '../runs/schema.ts';
import { agentHeartbeat, agentRunOf, agentRunState, joinRun, leaseUnit, planRun, unitCrashed } from './distribute.ts';
import {
  agentParams,
  agentRunSchema,
  crashResponse,
  crashSchema,
  heartbeatResponse,
  joinResponse,
  joinSchema,
  leaseResponse,
  leaseSchema,
  planResponse,
  planSchema,
  runStateResponse,
  unitParams,
} from './schema.ts';
import { RUN_STATES } from '../states.ts';

const TAG = 'Agents';

export function agentRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config } = deps;
  const leaseMs = config.agentLeaseMs;

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/agent-run',
    needs: 'member',
    tag: TAG,
    summary: "The run a CI build's agents share: made (pending, for agents) by the first, found by the others through run_key",
    body: agentRunSchema,
    response: z.object({ data: z.object({ test_run: z.object({ id: z.number().int(), state: z.enum(RUN_STATES) }) }) }),
    handler: async ({ body, scope }) => ({
      data: { test_run: (await agentRunOf(sql, scope.projectId, body, clock(), actorOf(scope))) as { id: number; state: (typeof RUN_STATES)[number] } },
    }),
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/agents',
    needs: 'member',
    // The server's executor serves a run of agents as one more agent, with a key of that run's made
    // for it; the run's reporter key and agents' tokens are refused (they would mint tokens).
    joins: ({ params }) => params.id,
    tag: TAG,
    summary: 'Join a run as an agent: a pending run becomes a run of agents; answers what to check out and a key for the reporter of its tests',
    params: runParams,
    body: joinSchema,
    response: joinResponse,
    status: 201,
    handler: async ({ params, body, scope }) => {
      const joined = await joinRun(sql, scope.projectId, params.id, body.name, clock());
      return {
        data: {
          agent: { id: joined.agentId, name: body.name, index: joined.index, joined: joined.joined },
          test_run: { id: params.id, state: joined.state, planned: joined.planned },
          checkout: joined.checkout,
          reporter_key: joined.reporterKey,
          changed_since: joined.changedSince,
          agent_token: joined.agentToken,
          lease_seconds: Math.round(leaseMs / 1000),
        },
      };
    },
  });

  addRoute(ctx, {
    method: 'put',
    path: '/api/test-runs/:id/units',
    agent: ({ params, body }) => ({ runId: params.id, agentId: body.agent_id }),
    tag: TAG,
    summary:
      "Plan a run of agents: the first agent's units (a file, or a test of a fully parallel file, per runner project) become its shards; a later plan is ignored",
    params: runParams,
    body: planSchema,
    response: planResponse,
    handler: async ({ params, body, scope }) => ({ data: await planRun(sql, scope.projectId, params.id, body, clock()) }),
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/units/lease',
    agent: ({ params, body }) => ({ runId: params.id, agentId: body.agent_id }),
    tag: TAG,
    summary:
      "Lease the run's next unit (or, with budget_ms, units to run in one Playwright), longest first by the environment's history (unknown first); held while the agent beats",
    params: runParams,
    body: leaseSchema,
    response: leaseResponse,
    handler: async ({ params, body, scope }) => {
      const lease = await leaseUnit(sql, scope.projectId, params.id, body.agent_id, leaseMs, clock(), body.budget_ms);
      return {
        data: {
          unit: lease.units[0] ?? null,
          units: lease.units,
          remaining: lease.remaining,
          test_run: { state: lease.state, planned: lease.planned },
          plan: lease.plan,
        },
      };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/agents/:agent/heartbeat',
    agent: ({ params }) => ({ runId: params.id, agentId: params.agent }),
    tag: TAG,
    summary: "An agent is alive: its leases are extended; the run's state tells it of a cancel",
    params: agentParams,
    response: heartbeatResponse,
    handler: async ({ params, scope }) => {
      const beat = await agentHeartbeat(sql, scope.projectId, params.id, params.agent, leaseMs, clock());
      return { data: { test_run: { state: beat.state }, leased_units: beat.units } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/:id/agents/:agent/state',
    agent: ({ params }) => ({ runId: params.id, agentId: params.agent }),
    tag: TAG,
    summary:
      "The run's state, which an agent asks every second between its heartbeats: a cancel (fail fast's too) reaches it at once; reads only, extends no lease",
    params: agentParams,
    response: runStateResponse,
    handler: async ({ params, scope }) => ({ data: { test_run: await agentRunState(sql, scope.projectId, params.id) } }),
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/units/:unit/crash',
    agent: ({ params, body }) => ({ runId: params.id, agentId: body.agent_id }),
    tag: TAG,
    summary:
      "A unit's Playwright ended without its reporter ending the unit: the first crash sends it to another agent, a second ends its shard `crashed` (the run then ends `error` naming it)",
    params: unitParams,
    body: crashSchema,
    response: crashResponse,
    handler: async ({ params, body, scope }) => ({
      data: await unitCrashed(sql, scope.projectId, params.id, body.agent_id, params.unit, body.error, clock()),
    }),
  });
}
