import { IncomingMessage, ServerResponse } from 'node:http';
import type express from 'express';

/** The `IncomingMessage` and `ServerResponse` options of `http.createServer`. */
export interface ServerClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

/**
 * The request and response classes node:http should make for `app` (ADR 0036). Their prototypes
 * become the app's `app.request` and `app.response`, the objects Express would otherwise swap
 * into every request with `Object.setPrototypeOf`; born with them, a request's swap changes
 * nothing. Call it once, after everything that adds to `app.request` or `app.response` (the
 * request log's `req.log`), before the server takes requests.
 *
 * Why: with the prototype swapped per request, every request's req, res and what they reach
 * survived V8's young-generation collections and was promoted. Measured at 200 requests a
 * second, a bare Express app kept 1.6–3.7 MB per scavenge and the platform about 1 MB (10 KB per
 * E1), which made a full mark-compact every ~3.7 s: the 8–23 ms stalls behind the paced p99.
 * Born with the prototype, the same app keeps 0.005 MB per scavenge, as plain node:http does.
 *
 * They are subclasses (not functions that call Node's constructors on another object), so V8
 * sizes their instances from Node's constructors: a function of our own left every res, and in
 * the platform every req, in slow dictionary mode. And they work whether Node defines its
 * constructors as functions or as classes.
 */
export function appServerClasses(app: express.Express): ServerClasses {
  class AppIncomingMessage extends IncomingMessage {}
  class AppServerResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
  app.request = adopt(AppIncomingMessage.prototype, app.request);
  app.response = adopt(AppServerResponse.prototype, app.response);
  return { IncomingMessage: AppIncomingMessage, ServerResponse: AppServerResponse };
}

/**
 * Makes `target` stand in for `source`: the same prototype and the same own properties (Express's
 * `app`, the request log's `log`), so it behaves as `source` did. Its own `constructor` stays, so
 * heap snapshots name each request's class.
 */
function adopt<T extends object>(target: object, source: T): T {
  Object.setPrototypeOf(target, Object.getPrototypeOf(source) as object | null);
  for (const key of Reflect.ownKeys(source)) {
    if (key === 'constructor') continue;
    Object.defineProperty(target, key, Reflect.getOwnPropertyDescriptor(source, key)!);
  }
  return target as T;
}
