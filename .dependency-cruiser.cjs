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
  'retention',
  // JUnit XML from any test runner, written as a shard of a run.
  'junit',
  'runs',
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
  'analytics',
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
    path: '^server/src/((context|config|copyfix|db|embedded(-socket|-worker|-pglite)?|migrate|logger|errors|principals|signing|states|xml)\\.ts$|storage/|outbound/)',
  },
];

const everyLayer = `(${layers.map((layer) => layer.path).join('|')})`;

const upwardImports = layers.slice(1).map((layer, index) => ({
  name: `no-upward-import-from-${layer.name.replace(/\W+/g, '-')}`,
  comment: `${layer.name} imports only layers below it: ${layers
    .slice(index + 2)
    .map((l) => l.name)
    .join(', ')}`,
  severity: 'error',
  from: { path: layer.path },
  to: {
    path: `(${layers
      .slice(0, index + 1)
      .map((l) => l.path)
      .join('|')})`,
  },
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
        path: '^reporter/dist/toolchain/',
        pathNot: '^reporter/dist/toolchain/(overrides|packages|playwright-args)\\.js$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'the-agent-is-a-client',
      comment:
        "The agent (the reporter package's, as proctor-ci runs it) is a client of the API: nothing of the server imports it but the `proctor` command's entry.",
      severity: 'error',
      from: { path: '^server/src/', pathNot: '^server/src/bin\\.ts$' },
      to: { path: '^reporter/dist/(cli/agent|agent/)', dependencyTypesNot: ['type-only'] },
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
      name: 'every-module-in-a-layer',
      comment: 'A new folder or file of server/src goes into one of the layers above.',
      severity: 'error',
      from: { path: '^server/src/', pathNot: everyLayer },
      to: {},
    },
  ],
  options: {
    // The reporter's toolchain and agent too, as the server imports them (built), and the badge
    // package, its sources and as the server imports it (built), for the rules above.
    includeOnly: '^(server/src/|badge/(src|dist)/|reporter/dist/(toolchain|agent|cli/agent))',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js'], exportsFields: ['exports'], conditionNames: ['import', 'default'] },
  },
};
