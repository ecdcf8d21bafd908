// The server's layers, top to bottom; every import must point down this list or stay in its own
// layer (README, Layout). A feature is a layer of its own, ranked so that the features a feature
// builds on stand below it; a new feature goes above everything it uses.
const features = [
  'dashboard',
  'agents',
  'retention',
  'runs',
  'notifications',
  'artifacts',
  'keys',
  'members',
  'failuregroups',
  'resources',
  'badges',
  'system',
  'users',
  'analytics',
  'flaky',
  'snoozes',
  'testcases',
  'environments',
  'auth',
  'sessions',
  'projects',
  'audit',
];

const layers = [
  { name: 'entry points', path: '^server/src/((main|bin|cli|server|workers|serving|app|demo)\\.ts$|commands/)' },
  // The agent (agent/) runs a run's units on any machine, the server's executor among them: a client
  // of the server's API over the jobs' toolchain.
  { name: 'jobs', path: '^server/src/(executor|agent)/' },
  ...features.map((feature) => ({ name: `feature ${feature}`, path: `^server/src/${feature}/` })),
  { name: 'http', path: '^server/src/http/' },
  { name: 'toolchain (git, npm, Playwright)', path: '^server/src/toolchain/' },
  { name: 'base', path: '^server/src/((context|config|copyfix|db|embedded|migrate|logger|errors|playwright-packages|principals|signing|states|xml)\\.ts$|storage/|outbound/)' },
];

const everyLayer = `(${layers.map((layer) => layer.path).join('|')})`;

const upwardImports = layers.slice(1).map((layer, index) => ({
  name: `no-upward-import-from-${layer.name.replace(/\W+/g, '-')}`,
  comment: `${layer.name} imports only layers below it: ${layers.slice(index + 2).map((l) => l.name).join(', ')}`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: `(${layers.slice(0, index + 1).map((l) => l.path).join('|')})` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module reaches itself through its imports, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upwardImports,
    {
      name: 'features-meet-through-their-index',
      comment:
        "A feature's store and services are its own: another feature, or the jobs layer, uses what its index.ts exports (and its schema.ts).",
      severity: 'error',
      from: { path: `^server/src/(${features.join('|')}|executor)/` },
      to: {
        path: `^server/src/(${features.join('|')})/`,
        pathNot: ['^server/src/$1/', `^server/src/(${features.join('|')})/(index|schema)\\.ts$`],
      },
    },
    {
      name: 'long-work-only-in-jobs',
      comment: 'Checkouts, installs and listings run in the jobs layer or the agent (or a command, or the demo seeded at start), never inside a request.',
      severity: 'error',
      from: { path: '^server/src/', pathNot: '^server/src/(executor/|agent/|toolchain/|(main|bin|cli|server|app|demo)\\.ts$)' },
      to: { path: '^server/src/toolchain/' },
    },
    {
      name: 'jobs-speak-domain-not-http',
      comment: "The jobs layer catches the domain's errors, not HTTP statuses.",
      severity: 'error',
      from: { path: '^server/src/executor/' },
      to: { path: '^server/src/http/' },
    },
    {
      name: 'every-module-in-a-layer',
      comment: 'A new folder or file of server/src goes into one of the layers above.',
      severity: 'error',
      from: { path: '^server/src/', pathNot: everyLayer },
      to: {},
    },
  ],
  options: {
    includeOnly: '^server/src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js'] },
  },
};
