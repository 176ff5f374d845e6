import { createHash } from 'node:crypto';

/** The shortest OPERATOR_TOKEN taken: 32 characters, e.g. `openssl rand -base64 32` (44). */
export const MIN_OPERATOR_TOKEN = 32;

/** SHA-256 of a token, hex: what the configuration keeps of OPERATOR_TOKEN, and what a request's is compared by. */
export const tokenDigest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * OPERATOR_TOKEN: the Bearer token of the operator API (/operator/v1, docs/operations.md#the-operator-api),
 * kept only as its SHA-256, so no dump or log of the configuration holds it. Unset: the routes answer 404.
 */
export function operatorToken(env: NodeJS.ProcessEnv): { operatorTokenSha256: string | undefined } {
  const token = env.OPERATOR_TOKEN;
  if (token === undefined || token === '') return { operatorTokenSha256: undefined };
  if (token.length < MIN_OPERATOR_TOKEN || /\s/.test(token))
    throw new Error(
      `OPERATOR_TOKEN must be at least ${MIN_OPERATOR_TOKEN} characters without spaces ` +
        '(e.g. the output of `openssl rand -base64 32`)',
    );
  return { operatorTokenSha256: tokenDigest(token) };
}
