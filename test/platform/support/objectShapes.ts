/**
 * Run with `node --allow-natives-syntax --import tsx` by appServerClasses.test.ts: serves one
 * request through an Express app on appServerClasses and prints, as JSON, whether V8 keeps the
 * request and response in fast mode (the layout its inline caches are built for) once Express
 * and a route have used them.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { appServerClasses } from '../../../src/platform/http/appServerClasses.js';

// V8's own test intrinsic, present only under --allow-natives-syntax; a call to it would not parse
// without the flag, so it is built from text here.
const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;

const app = express();
let shapes: { request: boolean; response: boolean } | undefined;
app.post('/probe', express.json(), (req, res) => {
  res.status(201).json({ got: req.body as unknown });
  shapes = { request: hasFastProperties(req), response: hasFastProperties(res) };
});
const server = createServer({ ...appServerClasses(app) }, app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
await new Promise<void>((resolve, reject) => {
  const outgoing = request(
    { host: '127.0.0.1', port, path: '/probe', method: 'POST', headers: { 'content-type': 'application/json' } },
    (answer) => {
      answer.resume();
      answer.on('end', resolve);
    },
  );
  outgoing.on('error', reject);
  outgoing.end('{"a":1}');
});
server.close();
process.stdout.write(`${JSON.stringify(shapes)}\n`);
