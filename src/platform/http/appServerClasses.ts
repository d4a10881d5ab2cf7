import { IncomingMessage, ServerResponse } from 'node:http';
import type express from 'express';

/** The `IncomingMessage` and `ServerResponse` options of `http.createServer`. */
export interface ServerClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

/**
 * The request and response classes node:http should make for `app` (ADR 0036): their instances
 * are born with the prototypes Express gives every request (`app.request`, `app.response`), so
 * the `Object.setPrototypeOf` Express runs on each request finds them in place and changes
 * nothing. They are still `IncomingMessage`s and `ServerResponse`s (`app.request` inherits from
 * `IncomingMessage.prototype`), built by Node's own constructors.
 *
 * Why: with the prototype swapped per request, every request's req, res and what they reach
 * survived V8's young-generation collections and was promoted. Measured at 200 requests a
 * second, a bare Express app kept 1.6–3.7 MB per scavenge and the platform about 1 MB (10 KB per
 * E1), which made a full mark-compact every ~3.7 s: the 5–15 ms pauses behind the paced p99.
 * Born with the prototype, the same app keeps 0.003 MB per scavenge, as plain node:http does.
 */
export function appServerClasses(app: express.Express): ServerClasses {
  return {
    IncomingMessage: bornWith(IncomingMessage, app.request),
    ServerResponse: bornWith(ServerResponse, app.response),
  };
}

/** A constructor that runs `base` on a new object whose prototype is `prototype`. */
function bornWith<C extends abstract new (...args: never[]) => object>(base: C, prototype: object): C {
  // Node defines IncomingMessage and ServerResponse as plain functions that initialise `this`,
  // as Express's own classes do. Reflect.construct with another new.target would also work for a
  // class, but measured 5x slower per request than calling the function on `this`.
  function Derived(this: object, ...args: unknown[]): void {
    Reflect.apply(base, this, args);
  }
  Derived.prototype = prototype;
  // Derived is `base` with another prototype object: same construction, same instance fields.
  return Derived as unknown as C;
}
