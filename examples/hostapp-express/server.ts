import { createHostappApp } from './app.js';

/** Starts the example host app server with its settings from the environment. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name} (see examples/hostapp-express/README.md)`);
  return value;
}

const app = createHostappApp({
  clientId: required('HOSTAPP_CLIENT_ID'),
  secretKey: required('HOSTAPP_SECRET_KEY'),
  tokenPrefix: process.env.HOSTAPP_TOKEN_PREFIX || undefined,
  signingSecrets: process.env.HOSTAPP_SIGNING_SECRETS?.split(',').filter(Boolean),
  platformUrl: process.env.MINIBRIDGE_URL || undefined,
});
const port = Number(process.env.PORT ?? 4011);
app.listen(port, () => console.log(`example host app server on http://localhost:${port}`));
