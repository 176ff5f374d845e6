import type { FastifyReply } from 'fastify';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { RateLimitedError, rateLimitHeaders } from '../accounts/rate-limit.ts';

/** Counts the request against the key's per-minute budget and shows what remains; throws 429 when spent. */
export async function applyRateLimit(core: Core, principal: Principal, reply: FastifyReply): Promise<void> {
  if (!core.config.enforceLimits) return;
  try {
    reply.headers(rateLimitHeaders(await core.rateLimiter.consume(principal.keyId), false));
  } catch (err) {
    if (err instanceof RateLimitedError) reply.headers(rateLimitHeaders(err.state, true));
    throw err;
  }
}
