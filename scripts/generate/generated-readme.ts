/** generated/README.md is itself generated, so every file under generated/ comes from the build. */
export const generatedReadme = `# generated/

Everything here is produced by \`npm run build\` from \`openapi/\`, \`docs/guides/\` and \`src/shipped/sdk/\`
(\`scripts/generate/\`, \`scripts/build-sdk.ts\`).
Never edit these files by hand: change the sources and run \`npm run build\`; \`npm run check\` fails
when this folder differs from what the sources produce.

- \`openapi/<api>.yaml\`, \`openapi/<api>.json\`: each API bundled into one document (Redocly).
- \`docs/<api>.html\`: self-contained Redoc reference pages; \`docs/index.html\`: landing page with the guides.
- \`types/<api>.ts\`: TypeScript types of each API (openapi-typescript); use \`components["schemas"]["X"]\`.
- \`types/apis.ts\`: the names of the APIs as \`redocly.yaml\` lists them (the code's one list of them).
- \`types/registry.ts\`: types of the partner registry file, from \`openapi/registry.schema.yaml\`.
- \`validators/registry.ts\`: that schema compiled by ajv into standalone code, which the platform checks the registry with at start-up.
- \`sdk/\`: the JS bridge SDK, its schema, types and validators, from \`openapi/bridge.schema.yaml\` and \`src/shipped/sdk/\` (\`scripts/build-sdk.ts\`);
  the conformance kit's formats, types and constants from \`openapi/bridge-conformance.schema.yaml\`.
- \`bridge-conformance/\`: the bridge conformance page as static files (the SDK, the runner and \`openapi/bridge.vectors.json\`
  bundled into \`conformance.js\`), from \`src/shipped/bridge-conformance/\` (\`scripts/build-bridge-conformance.ts\`).
`;
