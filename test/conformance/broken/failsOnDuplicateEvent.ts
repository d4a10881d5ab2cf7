import express from 'express';
import { referenceMiniappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** E6 fails the second delivery of the same event (not idempotent on X-Minibridge-Event-Id). */
export function failsOnDuplicateEvent(): BrokenServer {
  const seen = new Set<string>();
  const app = express().use(
    referenceMiniappRouter({
      idempotency: 'off',
      handlers: {
        receiveOrderCompletion: (_body, ctx) => {
          if (seen.has(ctx.eventId)) return { error_code: 'DUPLICATE_EVENT' };
          seen.add(ctx.eventId);
          return { code: 'SUCCESS' };
        },
        receiveEvent: () => ({ received: true }),
      },
    }),
  );
  return { name: 'fails on a duplicate event id', subject: 'miniapp', app, catches: ['idempotency receiveOrderCompletion'] };
}
