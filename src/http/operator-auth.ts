import { createHash, timingSafeEqual } from 'node:crypto';
import type { Core } from '../core.ts';
import { RateLimitedError, rateLimitHeaders } from '../accounts/rate-limit.ts';
import { AppError } from '../shared/errors.ts';
import type { PipelineHeaders } from './pipeline.ts';

/**
 * The operator API's way in (/operator/v1, docs/operations.md#the-operator-api): the Bearer token of
 * OPERATOR_TOKEN, compared by its SHA-256 in constant time (the configuration keeps only that). A wrong or
 * missing token counts against the client address's budget of failed authentications
 * (AUTH_FAILURES_PER_MINUTE, shared with API keys: past it the address is refused 429 before its token is
 * looked at); the token's requests share one per-minute budget (RATE_LIMIT_PER_MINUTE), with the RateLimit
 * headers.
 */

/** The rate limiter's key of the operator token (API keys are `key_…`). */
const OPERATOR_BUDGET = 'operator';

/** Whether the operator API is on: OPERATOR_TOKEN is set. */
export const operatorApiEnabled = (core: Pick<Core, 'config'>) => core.config.operatorTokenSha256 !== undefined;

function tokenMatches(authorization: string | undefined, expectedSha256: string): boolean {
  const sent = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  const digest = createHash('sha256')
    .update(sent ?? '', 'utf8')
    .digest();
  // Compared whatever was sent, so a missing token takes as long as a wrong one.
  return timingSafeEqual(digest, Buffer.from(expectedSha256, 'hex')) && sent !== undefined;
}

/**
 * Admits a request of the operator API, or throws: 401 `unauthenticated` (with `WWW-Authenticate`
 * among `setHeaders`) for a missing or wrong token, 429 `rate_limited` past either budget. Call it only
 * when `operatorApiEnabled`.
 */
export async function admitOperator(
  core: Pick<Core, 'config' | 'rateLimiter' | 'authFailureLimiter'>,
  authorization: string | undefined,
  address: string,
  setHeaders: (headers: PipelineHeaders) => void,
): Promise<void> {
  const expected = core.config.operatorTokenSha256;
  if (expected === undefined) throw new Error('admitOperator: OPERATOR_TOKEN is not set');
  const limited = core.config.enforceLimits && core.config.authFailuresPerMinute > 0;
  const bucket = `auth:${address}`;
  const refuse = (state: Parameters<typeof rateLimitHeaders>[0]) => {
    setHeaders(rateLimitHeaders(state, true));
    return new RateLimitedError(
      state,
      `Too many failed authentications from your address: the limit is ${state.limit} per minute. ` +
        `Retry in ${state.resetSecs} s with the operator token.`,
    );
  };
  const blocked = limited ? core.authFailureLimiter.exhausted(bucket) : undefined;
  if (blocked) throw refuse(blocked);
  if (!tokenMatches(authorization, expected)) {
    if (limited) {
      try {
        await core.authFailureLimiter.consume(bucket);
      } catch (over) {
        throw over instanceof RateLimitedError ? refuse(over.state) : over;
      }
    }
    setHeaders({ 'WWW-Authenticate': 'Bearer realm="operator"' });
    throw new AppError(
      401,
      'unauthenticated',
      'The operator API needs the OPERATOR_TOKEN: send "Authorization: Bearer <OPERATOR_TOKEN>" ' +
        '(an API key is not one)',
    );
  }
  if (!core.config.enforceLimits) return;
  try {
    setHeaders(rateLimitHeaders(await core.rateLimiter.consume(OPERATOR_BUDGET), false));
  } catch (err) {
    if (!(err instanceof RateLimitedError)) throw err;
    setHeaders(rateLimitHeaders(err.state, true));
    throw new RateLimitedError(
      err.state,
      `Too many requests: the operator token's limit is ${err.state.limit} per minute. ` +
        `Retry in ${err.state.resetSecs} s.`,
    );
  }
}
