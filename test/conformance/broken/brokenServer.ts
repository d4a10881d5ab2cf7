import type { Express, NextFunction, Request, Response } from 'express';

export interface BrokenServer {
  name: string;
  subject: 'hostapp' | 'miniapp';
  app: Express;
  /** The failing checks the kit must report, as "check operationId", and no other. */
  catches: string[];
  /** When the kit must stop before any check instead (catches is then empty): what its one message says. */
  stops?: RegExp;
  /** Signing secrets the kit signs with (the partner "enabled signing"). */
  signingSecrets?: string[];
}

/** Lets a broken server change how the reference server answers, before it answers. */
export function rewriteResponses(rewrite: (req: Request, res: Response) => void) {
  return (req: Request, res: Response, next: NextFunction) => {
    rewrite(req, res);
    next();
  };
}
