/**
 * The layers of src/ and the one direction imports run between them (src/README.md).
 * Checked by `npm run check`; a new folder needs a rule here before it can import anything.
 *
 *   src/contract/   reads the contract and its error catalogue: imports none of the others
 *   src/wire/       what both ends of a call do alike (signing, credentials, body reading, header
 *                   encodings): may import contract
 *   src/platform/   the running service: may import contract and wire
 *   src/shipped/    what partners install (kit, clients, SDK, conformance): may import contract and wire
 *   src/tools/      sandbox and simulator: may import any of the above
 *   src/main.ts, src/index.ts   the entry points that put them together
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes two modules one; split what they share into a third.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'contract-is-the-bottom',
      severity: 'error',
      comment: 'src/contract/ reads the contract and imports no other layer.',
      from: { path: '^src/contract/' },
      to: { path: '^src/(wire|platform|shipped|tools)/|^src/(main|index)\\.ts$' },
    },
    {
      name: 'wire-below-both-ends',
      severity: 'error',
      comment: 'src/wire/ is shared by the platform and what partners install, so it imports neither.',
      from: { path: '^src/wire/' },
      to: { path: '^src/(platform|shipped|tools)/|^src/(main|index)\\.ts$' },
    },
    {
      name: 'platform-imports-down-only',
      severity: 'error',
      comment: 'The platform must not depend on what is shipped to partners or on the tools.',
      from: { path: '^src/platform/' },
      to: { path: '^src/(shipped|tools)/|^src/(main|index)\\.ts$' },
    },
    {
      name: 'shipped-stands-alone',
      severity: 'error',
      comment: 'What partners install must not carry the platform or the tools.',
      from: { path: '^src/shipped/' },
      to: { path: '^src/(platform|tools)/|^src/(main|index)\\.ts$' },
    },
    {
      name: 'tools-not-imported',
      severity: 'error',
      comment: 'Only the entry points put the tools in.',
      from: { path: '^src/(contract|platform|shipped)/' },
      to: { path: '^src/tools/' },
    },
    {
      name: 'domain-not-http',
      severity: 'error',
      comment:
        'HTTP is the edge: the domain throws errors, src/platform/http/ turns them into answers. Every folder and module of src/platform/ but http/ itself and server.ts (which puts the service together) is domain.',
      from: { path: '^src/platform/', pathNot: '^src/platform/(http/|server\\.ts$)' },
      to: { path: '^src/platform/http/' },
    },
    {
      name: 'store-below-domain',
      severity: 'error',
      comment: 'The store keeps records; it does not call the domain above it.',
      from: { path: '^src/platform/store/' },
      to: { path: '^src/platform/', pathNot: '^src/platform/(store/|registry/|observability/|config\\.ts$)' },
    },
    {
      name: 'operations-not-imported-by-domain',
      severity: 'error',
      comment: 'Handlers sit on top of the domain.',
      from: { path: '^src/platform/', pathNot: '^src/platform/(operations/|http/|server\\.ts$)' },
      to: { path: '^src/platform/operations/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(generated|node_modules)/|^src/shipped/[^/]+/dist/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js'],
    },
  },
};
