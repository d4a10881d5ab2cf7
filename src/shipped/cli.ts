import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { RUN_ID_PATTERN } from '../../generated/sdk/bridge-conformance-contract.js';
import { verifyBridge, type VerifyBridgeOptions } from './bridge-conformance/verifyBridge.js';
import {
  CHECKS,
  CHECK_DESCRIPTIONS,
  junitReport,
  SUBJECTS,
  tableReport,
  verify,
  type CheckName,
  type Credentials,
  type PartnerEndpoint,
  type Subject,
  type VerifyOptions,
} from './conformance/index.js';

const USAGE = `Usage: minibridge verify hostapp|miniapp|platform --url <base> --credentials <id:secret> [options]
       minibridge verify bridge --url <sandbox> [--run <name>] [--wait <seconds>] [--junit <file>]

Checks that a server conforms to the Minibridge contract, with requests made from it.

  hostapp    a host app server (E3, E4, E7); --credentials hostapp_client_id:hostapp_secret_key
  miniapp    a miniapp server (E6, E7); --credentials app_id:secret_key
  platform   a Minibridge deployment (E1, E2, E5, E8, miniapp events, health) whose registry links
             the miniapp of --credentials (app_id:secret_key) to the host app of
             --hostapp-credentials (client_id:secret_key), with partner servers behind it that
             accept orders (the sandbox started by \`npm start\` does)

Options:
  --url <base>                  base URL of the server
  --credentials <id:secret>     the credentials the dashboard issued (see above)
  --hostapp-credentials <id:secret>  platform only: the linked host app
  --token-prefix <prefix>       host app Authorization prefix (default Token)
  --signing-secret <secret>     sign requests as Minibridge does (Standard Webhooks, plus the
                                deprecated X-Minibridge-* until 2027-06-01) and probe with wrong
                                signatures; the secret as registered or its whsec_ form (repeat
                                for two active secrets)
  --paths e3=/x,e4=/y,e6=/z,e7=/w  registered paths (or full URLs) instead of the contract's defaults
  --e4-method POST|GET          which E4 variant the host app registered (default POST)
  --app-id <id>                 hostapp: the miniapp named in requests (default: the contract's example)
  --client-id <id>              miniapp: the host app named in requests (default: the contract's example)
  --set <field>=<value>         send this value wherever a request body has the field (repeatable),
                                e.g. --set hostapp_order_payment_id=hop_1 for an order your server knows
  --only <check>                run one check: ${CHECKS.join(', ')}
  --junit <file>                also write JUnit XML
  -h, --help

Checks:
${CHECKS.map((check) => `  ${check.padEnd(13)}${CHECK_DESCRIPTIONS[check]}`).join('\n')}

bridge     a host app's bridge, as the bridge conformance page found it: open
           <sandbox>/bridge-conformance/?run=<name> in the host app, then read the run it
           reported to <sandbox> (the sandbox miniapp server, http://127.0.0.1:8082 under
           \`npm start\`); --run names it (default: the newest), --wait <seconds> waits for it
           to report and finish (default 0: read once). One check per rule of the bridge
           vectors (openapi/bridge.vectors.json).

Before the checks each operation is asked once: when the server cannot be reached, or refuses
the credentials on every operation, the run stops with one message saying which option to check.

Exit code 0 when every check passes, 1 when one fails or the run stops, 2 on a usage error.`;

class UsageError extends Error {}

export function parseVerifyArguments(argv: string[]): VerifyOptions & { junit?: string } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      credentials: { type: 'string' },
      'hostapp-credentials': { type: 'string' },
      'token-prefix': { type: 'string', default: 'Token' },
      'signing-secret': { type: 'string', multiple: true, default: [] },
      paths: { type: 'string' },
      'e4-method': { type: 'string', default: 'POST' },
      'app-id': { type: 'string' },
      'client-id': { type: 'string' },
      set: { type: 'string', multiple: true, default: [] },
      only: { type: 'string' },
      junit: { type: 'string' },
    },
  });
  const [subject, ...rest] = positionals;
  if (!SUBJECTS.includes(subject as Subject)) throw new UsageError(`verify what? one of ${SUBJECTS.join(', ')}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument ${rest[0]}`);
  if (!values.url || !/^https?:\/\//.test(values.url)) throw new UsageError('--url <base> is required (http:// or https://)');
  if (!values.credentials) throw new UsageError('--credentials <id:secret> is required');
  const method = values['e4-method'].toUpperCase();
  if (method !== 'POST' && method !== 'GET') throw new UsageError('--e4-method is POST or GET');
  if (values.only && !CHECKS.includes(values.only as CheckName)) throw new UsageError(`--only is one of ${CHECKS.join(', ')}`);
  if (subject === 'platform' && !values['hostapp-credentials'])
    throw new UsageError('verify platform needs --hostapp-credentials <client_id:secret_key>');
  return {
    subject: subject as Subject,
    url: values.url,
    credentials: credentials(values.credentials, '--credentials'),
    hostappCredentials: values['hostapp-credentials'] ? credentials(values['hostapp-credentials'], '--hostapp-credentials') : undefined,
    tokenPrefix: values['token-prefix'],
    signingSecrets: values['signing-secret'],
    paths: paths(values.paths),
    e4Method: method,
    appId: values['app-id'],
    clientId: values['client-id'],
    fixtures: values.set.map(fixture),
    only: values.only as CheckName | undefined,
    junit: values.junit,
  };
}

function credentials(text: string, option: string): Credentials {
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) throw new UsageError(`${option} is <id:secret>`);
  return { id: text.slice(0, colon), secret: text.slice(colon + 1) };
}

/** `order.items[0].product_sku=SKU-1` → the path and the string value. */
function fixture(text: string): { path: Array<string | number>; value: string } {
  const equals = text.indexOf('=');
  const field = text.slice(0, equals);
  if (equals <= 0 || !/^[A-Za-z_][\w]*(?:\[\d+\]|\.[A-Za-z_]\w*)*$/.test(field))
    throw new UsageError(`--set is <field>=<value>, e.g. order.miniapp_order_id=ORD-1; got ${text}`);
  const path = [...field.matchAll(/([A-Za-z_]\w*)|\[(\d+)\]/g)].map((match) => (match[2] === undefined ? match[1]! : Number(match[2])));
  return { path, value: text.slice(equals + 1) };
}

const ENDPOINTS: readonly PartnerEndpoint[] = ['e3', 'e4', 'e6', 'e7'];

function paths(text: string | undefined): Partial<Record<PartnerEndpoint, string>> {
  const found: Partial<Record<PartnerEndpoint, string>> = {};
  for (const entry of (text ?? '').split(',').filter(Boolean)) {
    const [name, ...value] = entry.split('=');
    const key = name!.trim().toLowerCase() as PartnerEndpoint;
    if (!ENDPOINTS.includes(key) || value.length === 0)
      throw new UsageError(`--paths takes ${ENDPOINTS.join('|')}=<path or URL> pairs, got ${entry}`);
    found[key] = value.join('=').trim();
  }
  return found;
}

const MAX_WAIT_SECONDS = 3600;

export function parseBridgeArguments(argv: string[]): VerifyBridgeOptions & { junit?: string } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { url: { type: 'string' }, run: { type: 'string' }, wait: { type: 'string', default: '0' }, junit: { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (!values.url || !/^https?:\/\//.test(values.url)) throw new UsageError('--url <sandbox> is required (http:// or https://)');
  const wait = Number(values.wait);
  if (!/^\d+$/.test(values.wait) || wait > MAX_WAIT_SECONDS)
    throw new UsageError(`--wait is a whole number of seconds, at most ${MAX_WAIT_SECONDS}`);
  if (values.run !== undefined && !new RegExp(RUN_ID_PATTERN).test(values.run))
    throw new UsageError('--run is the name the page was opened with (letters, digits, - and _)');
  return { url: values.url, ...(values.run !== undefined && { run: values.run }), waitSeconds: wait, junit: values.junit };
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help' || rest.includes('-h') || rest.includes('--help')) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  if (command !== 'verify') {
    console.error(`unknown command ${command}\n\n${USAGE}`);
    return 2;
  }
  if (rest[0] === 'bridge') return verifyBridgeCommand(rest.slice(1));
  let options: ReturnType<typeof parseVerifyArguments>;
  try {
    options = parseVerifyArguments(rest);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  const report = await verify(options);
  console.log(tableReport(report));
  if (options.junit) writeFileSync(options.junit, junitReport(report));
  return report.passed ? 0 : 1;
}

async function verifyBridgeCommand(argv: string[]): Promise<number> {
  let options: ReturnType<typeof parseBridgeArguments>;
  try {
    options = parseBridgeArguments(argv);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  const report = await verifyBridge(options);
  console.log(tableReport(report));
  if (options.junit) writeFileSync(options.junit, junitReport(report));
  return report.passed ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
