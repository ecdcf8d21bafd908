// The server's layers, top to bottom; every import must point down this list or stay in its own
// layer (docs/architecture.md). A feature is a layer of its own, ranked so that the features a feature
// builds on stand below it; a new feature goes above everything it uses.
const features = [
  // Backups read and write every table, whatever feature owns it, through the catalog alone.
  'backup',
  // An assistant's tools: the API's reads and writes over the Model Context Protocol.
  'mcp',
  'dashboard',
  // Two runs side by side: reads runs' results, their tests and failure groups.
  'comparisons',
  'agents',
  // Likely failures first: the order a run's tests go in, from the environment's history.
  'order',
  'retention',
  // JUnit XML from any test runner, written as a shard of a run.
  'junit',
  'runs',
  // Affected runs: the base commit and the tests to run again that an affected run starts from.
  'selection',
  // Visual changes: screenshot assertions found among attachments, compared, reviewed.
  'visual',
  // Issue trackers (GitHub Issues, GitLab issues): issues of failure groups and tests, kept in step through the destinations' clients.
  'trackers',
  'notifications',
  'artifacts',
  'keys',
  'members',
  'failuregroups',
  'resources',
  'badges',
  'system',
  // projects/ stands twice. Its routes and service, which make a project (binding its test
  // repository, asking whether its maker is an instance admin), stand here, above bindings and users;
  // the rest of it (the store of projects and memberships, which nearly every feature reads) lower
  // down (UPPER_FILES below).
  'projects',
  // The repositories an instance admin bound to a project, for the server's own GitHub and GitLab credentials.
  'bindings',
  'users',
  // Finding a project's tests, runs and failure groups by a text: reads their tables.
  'search',
  // A period's digest of an environment: reads analytics, flakiness and duration shifts.
  'digests',
  'analytics',
  // Tests that got slower: read by the rollup, which records them, and by the dashboard.
  'durations',
  'flaky',
  'snoozes',
  'testcases',
  'environments',
  'auth',
  'sessions',
  'projects',
  'audit',
  // Sending mail (SMTP through nodemailer): invitations, sign-in links, email destinations.
  'mail',
];

/** A feature listed twice: the files of its upper place; the rest of the folder is its lower one. */
const UPPER_FILES = { projects: '(routes|service)\\.ts$' };

function featureLayer(feature, index) {
  const upper = UPPER_FILES[feature];
  if (upper === undefined) return { name: `feature ${feature}`, path: `^server/src/${feature}/` };
  if (features.indexOf(feature) === index) return { name: `feature ${feature} (${upper})`, path: `^server/src/${feature}/${upper}` };
  return { name: `feature ${feature}`, path: `^server/src/${feature}/(?!${upper})` };
}

const layers = [
  { name: 'entry points', path: '^server/src/((main|bin|cli|server|workers|serving|app|demo)\\.ts$|commands/)' },
  { name: 'jobs', path: '^server/src/executor/' },
  ...features.map(featureLayer),
  { name: 'http', path: '^server/src/http/' },
  {
    name: 'base',
    path: '^server/src/((context|config|copyfix|db|embedded(-socket|-worker|-pglite)?|migrate|logger|metrics|errors|principals|signing|states|xml)\\.ts$|storage/|outbound/)',
  },
];

const everyLayer = `(${layers.map((layer) => layer.path).join('|')})`;

// The reporter package's jobs, top to bottom (docs/architecture.md): its entry, the proctor-ci
// commands, the agent, the toolchain (which the server's executor runs too), the Playwright reporter,
// the runs client, the API's wire format and HTTP client, and text (ANSI, Markdown, signatures).
const reporterLayers = [
  { name: 'reporter entry', path: '^reporter/src/index\\.ts$' },
  { name: 'reporter cli', path: '^reporter/src/cli/' },
  { name: 'reporter agent', path: '^reporter/src/agent/' },
  { name: 'reporter toolchain', path: '^reporter/src/toolchain/' },
  { name: 'reporter reporter', path: '^reporter/src/reporter/' },
  { name: 'reporter runs', path: '^reporter/src/runs/' },
  { name: 'reporter api', path: '^reporter/src/api/' },
  { name: 'reporter text', path: '^reporter/src/text/' },
];

const everyReporterLayer = `(${reporterLayers.map((layer) => layer.path).join('|')})`;

const upwardRules = (stack) =>
  stack.slice(1).map((layer, index) => ({
    name: `no-upward-import-from-${layer.name.replace(/\W+/g, '-')}`,
    comment: `${layer.name} imports only layers below it: ${stack
      .slice(index + 2)
      .map((l) => l.name)
      .join(', ')}`,
    severity: 'error',
    from: { path: layer.path },
    to: {
      path: `(${stack
        .slice(0, index + 1)
        .map((l) => l.path)
        .join('|')})`,
    },
  }));

const upwardImports = [...upwardRules(layers), ...upwardRules(reporterLayers)];

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
      comment: "A feature's store and services are its own: another feature, or the jobs layer, uses what its index.ts exports (and its schema.ts).",
      severity: 'error',
      from: { path: `^server/src/(${features.join('|')}|executor)/` },
      to: {
        path: `^server/src/(${features.join('|')})/`,
        pathNot: ['^server/src/$1/', `^server/src/(${features.join('|')})/(index|schema)\\.ts$`],
      },
    },
    {
      name: 'long-work-only-in-jobs',
      comment:
        "Checkouts, installs and listings (the reporter package's toolchain) run in the jobs layer (or a command, or the demo seeded at start), never inside a request; its types, the overrides rule, the Playwright arguments rule and where Playwright is installed are not work.",
      severity: 'error',
      from: { path: '^server/src/', pathNot: '^server/src/(executor/|(main|bin|cli|server|app|demo)\\.ts$)' },
      to: {
        path: '^reporter/src/toolchain/',
        pathNot: '^reporter/src/toolchain/(overrides|packages|playwright-args)\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'the-agent-is-a-client',
      comment:
        "The agent (the reporter package's, as proctor-ci runs it) is a client of the API: nothing of the server imports it but the `proctor` command's entry.",
      severity: 'error',
      from: { path: '^server/src/', pathNot: '^server/src/bin\\.ts$' },
      to: { path: '^reporter/src/(cli/agent|agent/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'domain-speaks-no-http',
      comment:
        'Below the routes (stores, services, domain rules), a feature throws domain errors and imports nothing of http/: only its routes, schemas and request middleware do. The dashboard is presentation throughout.',
      severity: 'error',
      from: { path: `^server/src/(${features.filter((f) => f !== 'dashboard').join('|')})/`, pathNot: '(routes|schema|middleware)\\.ts$' },
      to: { path: '^server/src/http/' },
    },
    {
      name: 'jobs-speak-domain-not-http',
      comment: "The jobs layer catches the domain's errors, not HTTP statuses.",
      severity: 'error',
      from: { path: '^server/src/executor/' },
      to: { path: '^server/src/http/' },
    },
    {
      name: 'the-badge-package-stands-alone',
      comment:
        'The badge renderer (the package @proctor/badge, badge/) is a library anyone can call: it imports nothing of the server or the reporter, only its own files and its two renderers.',
      severity: 'error',
      from: { path: '^badge/' },
      to: { path: '^(server|reporter)/' },
    },
    {
      name: 'badges-are-drawn-by-the-badges-feature',
      comment: 'Only the badges feature draws badges (@proctor/badge); the rest of the server links to them.',
      severity: 'error',
      from: { path: '^server/src/', pathNot: '^server/src/badges/' },
      to: { path: '^badge/' },
    },
    {
      name: 'the-reporter-runs-inside-playwright',
      comment:
        "The Playwright reporter (and its list and repeats reporters) runs inside the suite's Playwright, in a process of its own: the agent and the toolchain, which start that Playwright, use its report's types only.",
      severity: 'error',
      from: { path: '^reporter/src/(agent|toolchain)/' },
      to: { path: '^reporter/src/reporter/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'the-reporter-package-is-a-client',
      comment: 'The reporter package is installed without the server: nothing of it imports the server or the badge package.',
      severity: 'error',
      from: { path: '^reporter/' },
      to: { path: '^(server|badge)/' },
    },
    {
      name: 'every-reporter-module-in-a-layer',
      comment: 'A new folder or file of reporter/src goes into one of the reporter layers above (no loose files beside the folders).',
      severity: 'error',
      from: { path: '^reporter/src/', pathNot: everyReporterLayer },
      to: {},
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
    // The reporter package's sources (which the server imports through the `@proctor/source`
    // condition, below), and the badge package, its sources and as the server imports it (built).
    includeOnly: '^(server/src/|badge/(src|dist)/|reporter/src/)',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.mjs', '.js'],
      exportsFields: ['exports'],
      conditionNames: ['@proctor/source', 'import', 'default'],
    },
  },
};
