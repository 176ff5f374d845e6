/**
 * The layer rules of the house (docs/architecture.md, "Dependency direction"), checked by
 * test/architecture/boundaries.test.ts through dependency-cruiser's `cruise()` over src, schema, db and
 * workers. Type-only imports count: a rule about who may know whom holds for types too.
 */

/** Application domains: what catalog, sources and db never import. */
const APPLICATION = '^src/(runs|events|webhooks|workers|billing|accounts|endpoints|audit)/|^src/(core|app)\\.ts$';
/** Faces and what starts them: what no domain imports. `src/http` is the request pipeline every face shares. */
const FACES = '^(schema|src/rest|src/mcp|src/cli|src/console-routes|src/http|workers)/|^src/(app|main)\\.ts$';
/**
 * Domains: what imports no face. `src/workers` (job names, job routing, worker liveness) is domain code
 * the engine and the other domains import; `workers/` at the top level starts the worker and is a face.
 */
const DOMAINS = [
  'runs',
  'events',
  'webhooks',
  'workers',
  'billing',
  'accounts',
  'audit',
  'catalog',
  'endpoints',
  'tools',
  'sources',
  'upstream',
  'shared',
  'net',
];
/** The faces proper (the console's sign-in routes and its files included): none of them imports another. */
const FACE_DIRS = ['src/rest', 'src/mcp', 'src/cli', 'schema', 'src/console-routes'];

/**
 * Imports a rule lets through, each named by its exact path (one file to one file) with its reason.
 * A rule is never weakened beyond these.
 */
const KNOWN_EXCEPTIONS = {
  'cli-imports-no-other-face': [
    // `npx leadgate` is the process entry of the command line: its `mcp` command launches the stdio
    // face (a dynamic import), as src/main.ts launches the HTTP faces. Nothing else crosses.
    ['src/cli/index.ts', 'src/mcp/stdio.ts'],
  ],
};

const exact = (file) => `^${file.replace(/[.]/g, '\\.')}$`;

/**
 * A forbidden rule, minus its known exceptions: each exception lets exactly one import (one file to
 * one file) through, and every other import the rule covers stays forbidden.
 */
function forbid(name, comment, from, to) {
  const exceptions = KNOWN_EXCEPTIONS[name] ?? [];
  if (exceptions.length === 0) return [{ name, comment, severity: 'error', from, to }];
  const fromFiles = [...new Set(exceptions.map(([file]) => file))];
  return [
    { name, comment, severity: 'error', from: { ...from, pathNot: fromFiles.map(exact) }, to },
    ...fromFiles.map((file) => ({
      name,
      comment,
      severity: 'error',
      from: { path: exact(file) },
      to: { ...to, pathNot: exceptions.filter(([f]) => f === file).map(([, target]) => exact(target)) },
    })),
  ];
}

module.exports = {
  forbidden: [
    forbid('no-circular', 'No import cycles anywhere in src, schema, db and workers.', { path: '^(src|schema|db|workers)/' }, { circular: true }),
    forbid('db-imports-no-src', 'db/ (tables, migrations, client, importer, seed) never imports src/.', { path: '^db/' }, { path: '^src/' }),
    forbid(
      'data-layer-imports-no-application',
      'catalog, sources and db never import application domains (runs, events, webhooks, workers, billing, accounts, ' +
        'endpoints, core, app).',
      { path: '^(src/catalog|src/sources|src/upstream|db)/' },
      { path: APPLICATION },
    ),
    forbid('data-layer-imports-no-face', 'catalog, sources and db never import a face.', { path: '^(src/catalog|src/sources|src/upstream|db)/' }, { path: FACES }),
    forbid('domains-import-no-face', 'Domains never import a face, the request pipeline or what starts them.', { path: `^src/(${DOMAINS.join('|')})/` }, { path: FACES }),
    ...FACE_DIRS.map((face) =>
      forbid(
        `${face.replace('src/', '')}-imports-no-other-face`,
        `${face} imports no other face (they share src/http, the request pipeline).`,
        { path: `^${face}/` },
        { path: `^(${FACE_DIRS.filter((other) => other !== face).join('|')})/` },
      ),
    ),
    forbid(
      'shared-imports-no-domain',
      'src/shared is the kernel every domain uses; it imports no domain.',
      { path: '^src/shared/' },
      { path: `^src/(${DOMAINS.filter((d) => d !== 'shared').join('|')})/|^src/(core|app|main)\\.ts$` },
    ),
    forbid(
      'shared-imports-no-seed',
      'src/shared imports no seed data (db/seed); reference data both use lives outside the generator.',
      { path: '^src/shared/' },
      { path: '^db/seed/' },
    ),
    forbid(
      'sources-import-no-implementation',
      'The source interfaces (src/sources) import none of their implementations: the catalog, src/net, src/upstream.',
      { path: '^src/sources/' },
      { path: '^src/(catalog|net|upstream)/' },
    ),
    forbid(
      'billing-imports-no-runs',
      'Billing knows no run lifecycle (src/runs, src/events, src/webhooks): the run queue composes the hold it writes.',
      { path: '^src/billing/' },
      { path: '^src/(runs|events|webhooks)/' },
    ),
    forbid(
      'run-engine-through-its-front',
      'Outside the run engine, code calls it through its front (src/runs/engine/index.ts), not one of its systems.',
      { path: '^(src|schema|workers|db)/', pathNot: '^src/runs/engine/' },
      { path: '^src/runs/engine/', pathNot: '^src/runs/engine/index\\.ts$' },
    ),
  ].flat(),
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6', 'cjs'],
  },
};
