import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { type AllowList, AllowListError, parseAllowList } from './outbound/addresses.ts';

const portSchema = z.coerce.number().int().min(0).max(65535);

const envSchema = z.object({
  PORT: portSchema.default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PROCTOR_METRICS_PORT: portSchema.optional(),
  PROCTOR_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  PROCTOR_DATA_DIR: z.string().min(1).default('.proctor'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  PROCTOR_SIGNING_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  PROCTOR_BODY_LIMIT: z
    .string()
    .regex(/^\d+(kb|mb)$/i, 'must look like 5mb or 512kb')
    .default('5mb'),
  PROCTOR_UPLOAD_LIMIT_MB: z.coerce.number().int().min(1).max(10_240).default(100),
  PROCTOR_UPLOAD_IDLE_S: z.coerce.number().min(0.1).max(3600).default(30),
  PROCTOR_SHARD_TIMEOUT_S: z.coerce.number().int().min(1).default(1800),
  PROCTOR_SWEEP_INTERVAL_S: z.coerce.number().min(0.05).default(15),
  PROCTOR_BADGE_STATE_TTL_MS: z.coerce.number().int().min(0).default(1000),
  PROCTOR_EXECUTOR_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(1),
  PROCTOR_RUN_TIMEOUT_MIN: z.coerce.number().min(0.01).default(60),
  PROCTOR_EXECUTOR_POLL_MS: z.coerce.number().int().min(10).default(1000),
  PROCTOR_HEARTBEAT_MS: z.coerce.number().int().min(10).default(2000),
  PROCTOR_LOST_RUN_S: z.coerce.number().min(0.1).default(30),
  PROCTOR_RUN_TAKEOVERS: z.coerce.number().int().min(0).max(10).default(1),
  PROCTOR_AGENT_LEASE_S: z.coerce.number().min(0.1).max(86_400).default(30),
  PROCTOR_LIVE_STREAM_TTL_S: z.coerce.number().min(1).max(3600).default(60),
  PROCTOR_SYNC_WAIT_S: z.coerce.number().min(0.1).default(300),
  PROCTOR_DB_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),
  PROCTOR_GROUP_COMMIT: z.enum(['true', 'false']).default('true'),
  PROCTOR_CHECK_RESPONSES: z.enum(['true', 'false']).default('false'),
  PROCTOR_HTTP_WORKERS: z.union([z.literal('auto'), z.coerce.number().int().min(1).max(64)], 'must be auto or a whole number from 1 to 64').default('auto'),
  PROCTOR_RUNNER_USER: z.string().min(1).default('nobody'),
  PROCTOR_DEMO: z.enum(['true', 'false']).default('true'),
  PROCTOR_S3_BUCKET: z.string().min(3).max(63).optional(),
  PROCTOR_S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  PROCTOR_S3_REGION: z.string().min(1).optional(),
  PROCTOR_S3_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._/-]*$/, 'may hold letters, digits, . _ - and /')
    .default(''),
  PROCTOR_OIDC_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  PROCTOR_OIDC_CLIENT_ID: z.string().min(1).optional(),
  PROCTOR_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  PROCTOR_OIDC_TRUST_EMAILS: z.url({ protocol: /^https?$/ }).optional(),
  PROCTOR_RETENTION_RESULTS_DAYS: z.coerce.number().int().min(1).max(36_500).default(90),
  PROCTOR_RETENTION_ARTIFACTS_DAYS: z.coerce.number().int().min(1).max(36_500).optional(),
  PROCTOR_RETENTION_INTERVAL_MIN: z.coerce.number().min(0.001).default(60),
  PROCTOR_INVITE_DAYS: z.coerce.number().min(0.001).max(365).default(7),
  PROCTOR_NOTIFY_RETRY_HOURS: z.coerce.number().min(0.001).max(720).default(24),
  PROCTOR_NOTIFY_ALLOW_HOSTS: z.string().default(''),
  PROCTOR_GITHUB_API_URL: z.url({ protocol: /^https?$/ }).default('https://api.github.com'),
  PROCTOR_GITLAB_API_URL: z.url({ protocol: /^https?$/ }).default('https://gitlab.com/api/v4'),
  PROCTOR_LINEAR_API_URL: z.url({ protocol: /^https?$/ }).default('https://api.linear.app/graphql'),
  PROCTOR_SLACK_API_URL: z.url({ protocol: /^https?$/ }).default('https://slack.com/api'),
  PROCTOR_GITHUB_APP_ID: z.coerce.number().int().min(1).optional(),
  PROCTOR_GITHUB_APP_PRIVATE_KEY: z.string().includes('PRIVATE KEY', { error: 'must be the GitHub App private key in PEM' }).optional(),
  PROCTOR_GITLAB_TOKEN: z.string().min(1).max(500).optional(),
  PROCTOR_SMTP_URL: z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL, like smtp://user:password@host:587' }).optional(),
  PROCTOR_MAIL_FROM: z
    .string()
    .max(320)
    .regex(/^(?:[^<>@\r\n]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/, 'must be an address, or a name and an address: Proctor <proctor@example.com>')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.infer<typeof envSchema>;

/** Where the executor checks out, installs and runs: under the data directory. */
export function workRootOf(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'work');
}

/** An S3-compatible bucket that holds uploaded bytes instead of the data directory. */
export interface S3Settings {
  bucket: string;
  /** For a store other than AWS (MinIO, Ceph, R2...): addressed by path, `<endpoint>/<bucket>/<key>`. */
  endpoint: string | null;
  region: string;
  /** Put before every key, to share a bucket. */
  prefix: string;
  /** From AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; null: the SDK's own chain (profile, instance role...). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
}

/** What a project keeps until it sets its own policy, and how often the retention pass runs. */
export interface RetentionSettings {
  resultsDays: number;
  artifactsDays: number;
  intervalMs: number;
}

/** How run endings are told to Slack, webhooks and GitHub. */
export interface NotifySettings {
  /** A delivery that has not gone through this long after the run ended is given up on. */
  retryMs: number;
  /**
   * Receivers a project admin may name beyond public addresses (the operator's internal ones):
   * host names and networks. Everything else private, loopback, link-local... is refused.
   */
  allow: AllowList;
  /** GitHub's REST API (another for GitHub Enterprise Server). */
  githubApiUrl: string;
  /** GitLab's REST API, `https://HOST/api/v4`. */
  gitlabApiUrl: string;
  /** Linear's GraphQL API; reached under the receivers' outbound rules, as a Jira site is. */
  linearApiUrl: string;
  /** Slack's Web API, for Slack destinations by bot token (chat.postMessage); reached under the receivers' outbound rules. */
  slackApiUrl: string;
  /** A GitHub App whose installations authenticate GitHub destinations that have no token. */
  githubApp: { appId: number; privateKey: string } | null;
  /**
   * The operator's GitLab token, for GitLab destinations that have none; like the App, it acts
   * only on the GitLab projects an instance admin bound to the destination's project.
   */
  gitlabToken: string | null;
}

/** An OpenID Connect provider people sign in to the dashboard with. */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /**
   * Whether an email the provider gives without `email_verified` is taken as verified: only when
   * the operator names this provider (PROCTOR_OIDC_TRUST_EMAILS), for one that verifies every
   * address and does not say so. `email_verified: false` is refused all the same.
   */
  trustEmailsWithoutClaim: boolean;
}

/** How Proctor sends mail: invitations, sign-in links, notifications to email destinations. */
export interface MailSettings {
  /** PROCTOR_SMTP_URL, with its credential: never logged or shown (see `smtpServerOf`). */
  smtpUrl: string;
  /** The From of every mail. */
  from: string;
}

/** The SMTP server as logs and pages may name it: scheme, host and port, never the user or password. */
export function smtpServerOf(settings: MailSettings): string {
  const url = new URL(settings.smtpUrl);
  return `${url.protocol}//${url.host}`;
}

/** Where Prometheus scrapes a node: a listener of its own, apart from the API. */
export interface MetricsSettings {
  port: number;
  /** Loopback unless the operator says: the metrics take no key. */
  host: string;
}

export interface Config {
  port: number;
  host: string;
  /** Null: no metrics are served (PROCTOR_METRICS_PORT is not set). */
  metrics: MetricsSettings | null;
  databaseUrl: string | null;
  dataDir: string;
  /** PUBLIC_URL, else `http://localhost:$PORT`. */
  publicUrl: string;
  /** Whether PUBLIC_URL was given: else links name the address the server listens on. */
  publicUrlGiven: boolean;
  signingSecret: string | null;
  bodyLimit: string;
  uploadLimitBytes: number;
  /** A streamed upload that sends nothing this long is dropped. */
  uploadIdleMs: number;
  shardTimeoutMs: number;
  sweepIntervalMs: number;
  badgeStateTtlMs: number;
  /** A unit whose agent stopped beating this long goes back to the queue. */
  agentLeaseMs: number;
  /** A live stream whose node stopped renewing it this long no longer counts toward its client's limit. */
  liveStreamTtlMs: number;
  executor: { concurrency: number; runTimeoutMs: number; pollMs: number; heartbeatMs: number; lostRunMs: number; runTakeovers: number };
  /** How long a sync request waits on its job before it answers that the job goes on. */
  syncWaitMs: number;
  dbPoolMax: number;
  /** Result batches that arrive together are written in one transaction (PostgreSQL only). */
  groupCommit: boolean;
  /** Every JSON answer is checked against its documented schema; a mismatch fails the request (the tests turn it on). */
  checkResponses: boolean;
  /** Processes serving HTTP, `auto` for one per core; more than one needs PostgreSQL. */
  httpWorkers: number | 'auto';
  /** The unprivileged user that runs suites when the server runs as root. */
  runnerUser: string;
  demo: boolean;
  /** Null: uploaded bytes live under the data directory. Credentials come from the standard AWS variables. */
  s3: S3Settings | null;
  /** Null: people sign in with one-time links only. */
  oidc: OidcSettings | null;
  retention: RetentionSettings;
  /** How long an invitation's link works. */
  inviteDays: number;
  notify: NotifySettings;
  /** Null: no mail is sent; pages show the links to pass on. */
  mail: MailSettings | null;
  logLevel: Env['LOG_LEVEL'];
}

export class ConfigError extends Error {}

/** Reads the configuration from the environment; a bad variable is named in the error. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    metrics: e.PROCTOR_METRICS_PORT === undefined ? null : { port: e.PROCTOR_METRICS_PORT, host: e.PROCTOR_METRICS_HOST },
    databaseUrl: e.DATABASE_URL ?? null,
    dataDir: path.resolve(e.PROCTOR_DATA_DIR),
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    publicUrlGiven: e.PUBLIC_URL !== undefined,
    signingSecret: e.PROCTOR_SIGNING_SECRET ?? null,
    bodyLimit: e.PROCTOR_BODY_LIMIT,
    uploadLimitBytes: e.PROCTOR_UPLOAD_LIMIT_MB * 1024 * 1024,
    uploadIdleMs: e.PROCTOR_UPLOAD_IDLE_S * 1000,
    shardTimeoutMs: e.PROCTOR_SHARD_TIMEOUT_S * 1000,
    sweepIntervalMs: e.PROCTOR_SWEEP_INTERVAL_S * 1000,
    badgeStateTtlMs: e.PROCTOR_BADGE_STATE_TTL_MS,
    agentLeaseMs: e.PROCTOR_AGENT_LEASE_S * 1000,
    liveStreamTtlMs: e.PROCTOR_LIVE_STREAM_TTL_S * 1000,
    executor: {
      concurrency: e.PROCTOR_EXECUTOR_CONCURRENCY,
      runTimeoutMs: e.PROCTOR_RUN_TIMEOUT_MIN * 60_000,
      pollMs: e.PROCTOR_EXECUTOR_POLL_MS,
      heartbeatMs: e.PROCTOR_HEARTBEAT_MS,
      lostRunMs: e.PROCTOR_LOST_RUN_S * 1000,
      runTakeovers: e.PROCTOR_RUN_TAKEOVERS,
    },
    syncWaitMs: e.PROCTOR_SYNC_WAIT_S * 1000,
    dbPoolMax: e.PROCTOR_DB_POOL_MAX,
    groupCommit: e.PROCTOR_GROUP_COMMIT === 'true',
    checkResponses: e.PROCTOR_CHECK_RESPONSES === 'true',
    httpWorkers: e.PROCTOR_HTTP_WORKERS,
    runnerUser: e.PROCTOR_RUNNER_USER,
    demo: e.PROCTOR_DEMO === 'true',
    s3: s3Settings(e, cleaned),
    oidc: oidcSettings(e),
    retention: retentionSettings(e),
    inviteDays: e.PROCTOR_INVITE_DAYS,
    notify: {
      retryMs: e.PROCTOR_NOTIFY_RETRY_HOURS * 3_600_000,
      allow: notifyAllowList(e, cleaned),
      githubApiUrl: e.PROCTOR_GITHUB_API_URL.replace(/\/+$/, ''),
      gitlabApiUrl: e.PROCTOR_GITLAB_API_URL.replace(/\/+$/, ''),
      linearApiUrl: e.PROCTOR_LINEAR_API_URL,
      slackApiUrl: e.PROCTOR_SLACK_API_URL.replace(/\/+$/, ''),
      githubApp: githubApp(e),
      gitlabToken: e.PROCTOR_GITLAB_TOKEN ?? null,
    },
    mail: mailSettings(e),
    logLevel: e.LOG_LEVEL,
  };
}

function mailSettings(e: Env): MailSettings | null {
  if (!e.PROCTOR_SMTP_URL) {
    if (e.PROCTOR_MAIL_FROM) throw new ConfigError('invalid configuration: PROCTOR_MAIL_FROM: no mail is sent without PROCTOR_SMTP_URL');
    return null;
  }
  // The public URL's host names the sender unless the operator does; a mail server may want its own domain.
  const host = new URL(e.PUBLIC_URL ?? 'http://localhost').hostname.replace(/^\[|\]$/g, '');
  return { smtpUrl: e.PROCTOR_SMTP_URL, from: e.PROCTOR_MAIL_FROM ?? `Proctor <proctor@${host}>` };
}

function s3Settings(e: Env, aws: Record<string, string | undefined>): S3Settings | null {
  if (!e.PROCTOR_S3_BUCKET) {
    if (e.PROCTOR_S3_ENDPOINT) throw new ConfigError('invalid configuration: PROCTOR_S3_BUCKET: required when PROCTOR_S3_ENDPOINT is set');
    return null;
  }
  const prefix = e.PROCTOR_S3_PREFIX.replace(/^\/+/, '');
  return {
    bucket: e.PROCTOR_S3_BUCKET,
    endpoint: e.PROCTOR_S3_ENDPOINT?.replace(/\/+$/, '') ?? null,
    region: e.PROCTOR_S3_REGION ?? aws.AWS_REGION ?? 'us-east-1',
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
    credentials:
      aws.AWS_ACCESS_KEY_ID && aws.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: aws.AWS_ACCESS_KEY_ID,
            secretAccessKey: aws.AWS_SECRET_ACCESS_KEY,
            ...(aws.AWS_SESSION_TOKEN ? { sessionToken: aws.AWS_SESSION_TOKEN } : {}),
          }
        : null,
  };
}

/** Artifacts are kept 30 days by default, and never longer than results. */
function retentionSettings(e: Env): RetentionSettings {
  const resultsDays = e.PROCTOR_RETENTION_RESULTS_DAYS;
  const artifactsDays = e.PROCTOR_RETENTION_ARTIFACTS_DAYS ?? Math.min(30, resultsDays);
  if (artifactsDays > resultsDays) {
    throw new ConfigError(
      `invalid configuration: PROCTOR_RETENTION_ARTIFACTS_DAYS: ${artifactsDays} is more than PROCTOR_RETENTION_RESULTS_DAYS (${resultsDays}); attachments are never kept longer than results`,
    );
  }
  return { resultsDays, artifactsDays, intervalMs: e.PROCTOR_RETENTION_INTERVAL_MIN * 60_000 };
}

function notifyAllowList(e: Env, given: Record<string, string | undefined>): AllowList {
  if (given.PROCTOR_NOTIFY_DENY_PRIVATE !== undefined) {
    throw new ConfigError(
      'invalid configuration: PROCTOR_NOTIFY_DENY_PRIVATE is gone: private and loopback receivers are refused by default; name the ones to allow in PROCTOR_NOTIFY_ALLOW_HOSTS',
    );
  }
  try {
    return parseAllowList(e.PROCTOR_NOTIFY_ALLOW_HOSTS);
  } catch (error) {
    if (error instanceof AllowListError) throw new ConfigError(`invalid configuration: PROCTOR_NOTIFY_ALLOW_HOSTS: ${error.message}`);
    throw error;
  }
}

function githubApp(e: Env): NotifySettings['githubApp'] {
  if (e.PROCTOR_GITHUB_APP_ID === undefined && e.PROCTOR_GITHUB_APP_PRIVATE_KEY === undefined) return null;
  if (e.PROCTOR_GITHUB_APP_ID === undefined || e.PROCTOR_GITHUB_APP_PRIVATE_KEY === undefined) {
    throw new ConfigError('invalid configuration: PROCTOR_GITHUB_APP_ID and PROCTOR_GITHUB_APP_PRIVATE_KEY: set both, or neither');
  }
  // An environment variable often carries the PEM's line breaks as \n.
  return { appId: e.PROCTOR_GITHUB_APP_ID, privateKey: e.PROCTOR_GITHUB_APP_PRIVATE_KEY.replace(/\\n/g, '\n') };
}

function oidcSettings(e: Env): OidcSettings | null {
  const given = [e.PROCTOR_OIDC_ISSUER, e.PROCTOR_OIDC_CLIENT_ID, e.PROCTOR_OIDC_CLIENT_SECRET];
  if (given.every((value) => value === undefined)) {
    if (e.PROCTOR_OIDC_TRUST_EMAILS !== undefined)
      throw new ConfigError('invalid configuration: PROCTOR_OIDC_TRUST_EMAILS: no provider is set (PROCTOR_OIDC_ISSUER)');
    return null;
  }
  if (given.some((value) => value === undefined)) {
    throw new ConfigError('invalid configuration: PROCTOR_OIDC_ISSUER, PROCTOR_OIDC_CLIENT_ID and PROCTOR_OIDC_CLIENT_SECRET: set all three, or none');
  }
  const issuer = e.PROCTOR_OIDC_ISSUER as string;
  // The trust names its provider, so that it does not pass to another one when the issuer changes.
  const sameIssuer = (a: string, b: string) => new URL(a).href.replace(/\/$/, '') === new URL(b).href.replace(/\/$/, '');
  if (e.PROCTOR_OIDC_TRUST_EMAILS !== undefined && !sameIssuer(e.PROCTOR_OIDC_TRUST_EMAILS, issuer)) {
    throw new ConfigError(
      `invalid configuration: PROCTOR_OIDC_TRUST_EMAILS names ${e.PROCTOR_OIDC_TRUST_EMAILS}, not the provider of PROCTOR_OIDC_ISSUER (${issuer}): it trusts the provider it names`,
    );
  }
  return {
    issuer,
    clientId: e.PROCTOR_OIDC_CLIENT_ID as string,
    clientSecret: e.PROCTOR_OIDC_CLIENT_SECRET as string,
    trustEmailsWithoutClaim: e.PROCTOR_OIDC_TRUST_EMAILS !== undefined,
  };
}

export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}
