import { ENDPOINTS } from '../src/endpoints/index.ts';
import { GRAPHQL_ERROR_CODES, graphQLCode, graphQLMessage, graphQLPath } from '../src/http/errors.ts';
import { AppError, type ErrorDetail } from '../src/shared/errors.ts';
import { builder } from './builder.ts';

/**
 * The REST error codes, each with what it means. `ErrorCode` is this list in SCREAMING_SNAKE_CASE,
 * with the GraphQL-only codes after it; test/faces/graphql/errors.test.ts fails when a code an endpoint
 * declares or any AppError of src/ carries is missing here.
 */
export const REST_ERROR_CODES: Record<string, string> = {
  unauthenticated: 'No API key, or an unknown or revoked one.',
  rate_limited: 'Over the per-minute request budget of the API key; retry after the time the message gives.',
  internal_error: 'Something went wrong on our side; the error was logged.',
  validation_failed: 'An argument or input field is missing or out of range; `field` names it.',
  invalid_json: 'The request body is not valid JSON.',
  invalid_request: 'The HTTP request itself is malformed.',
  payload_too_large: 'The request body is larger than 1 MB.',
  unsupported_media_type: 'The request body is not JSON.',
  query_string_too_long: 'The query string is longer than 16 KB; send a POST body.',
  method_not_allowed: 'The route does not take this HTTP method.',
  not_found: 'No such run, webhook or route in this account.',
  dataset_not_found: 'No dataset of that id or name in this account.',
  task_not_found: 'No saved task of that id or name in this account.',
  task_exists: 'The account has a saved task of that name already.',
  saved_search_not_found: 'No saved lead search of that id in this account.',
  saved_search_exists: 'The account has a saved lead search of that name already.',
  saved_search_limit: 'The account keeps the most saved lead searches it may; delete one first.',
  schedule_not_found: 'No schedule of that id (or task) in this account.',
  pipeline_not_found: 'No pipeline of that id in this account.',
  pipeline_finished: 'The pipeline has ended already.',
  connection_not_found: 'No provider connection of that id in this account.',
  destination_not_found: 'No destination of that id in this account.',
  delivery_not_found: 'No delivery of that id in this account.',
  drop_file_invalid: 'The file is not a DROP download or response file as the DROP specification defines it.',
  suppression_not_found: 'No do-not-contact entry of that id in this account.',
  suppression_kept: 'The entry came from the person’s own request (an opt-out), and stays.',
  provider_unavailable: 'The provider (HubSpot, Slack…) could not be reached; try again in a moment.',
  provider_not_configured: 'Signing in to that provider needs its app, which this server’s operator has not set up.',
  secrets_not_configured: 'This server keeps no provider tokens until its operator sets SECRETS_KEYS.',
  plan_required: 'The account’s plan does not include this tool or database.',
  permissible_use_required:
    'Criminal records and people-finder results are not for regulated purposes; the account acknowledges it once ' +
    '(acknowledgePermissibleUse) before their first run.',
  subscription_inactive: 'Buying credits needs an active subscription.',
  payment_failed: 'The card was declined (the message gives the reason); nothing was charged or credited.',
  payment_requires_action:
    'The bank asks the card holder to authenticate the payment (3-D Secure); the credits are added once it succeeds.',
  payment_method_required: 'The account has no card on file; add one in the billing portal.',
  payments_not_configured: 'This server takes no payments: credits are granted by its operator.',
  payment_provider_unavailable:
    'The payment provider did not answer; nothing was credited. Retry later with the same idempotency key.',
  upstream_unavailable:
    'The scraping engine a tool runs on refused or could not be reached (a run’s failure message; ' +
    'the detail is in the operator’s logs).',
  invalid_signature: 'A Stripe event whose Stripe-Signature does not verify (POST /hooks/stripe only).',
  insufficient_funds: 'The wallet cannot pay for one unit of the tool; buy credits with `buyCredits`.',
  daily_limit_reached: 'The daily allowance of database records or enrichment matches is used up until midnight UTC.',
  idempotency_key_reused: 'The idempotency key was used with another input in the last 24 hours.',
  not_cancellable: 'The tool’s runs cannot be cancelled.',
  run_finished: 'The run has ended already.',
  cost_limit_exceeded: 'The start is quoted over the cost limit it was given; nothing was started or held.',
  run_not_finished: 'The run has not ended yet, so its results cannot be downloaded.',
  results_expired: 'The run’s results are past their 48 hours and deleted.',
  no_usable_filters: 'The search link has no filter the lead database can use.',
  unsupported_url_format: 'The people-search link uses the newer format without brackets.',
  filters_not_applied_yet: 'Company data is still being prepared, so company filters cannot apply yet.',
  map_view_not_allowed: 'A commercial-property link is a map view, which cannot be scraped.',
  query_timeout: 'The database search took too long; narrow it.',
  database_unavailable:
    'The database is restarting or out of reach for a moment; ' +
    'retry after `retryAfter` seconds (REST: the Retry-After header).',
  query_too_complex:
    'The GraphQL document asks for too much at once (complexity, ' +
    'depth or breadth); ask for fewer fields or smaller pages.',
  webhook_delivery_failed: 'A webhook delivery was not accepted by its URL.',
  role_required:
    'The caller’s role in the account does not allow this (members cannot manage keys, members or billing; ' +
    'admins cannot touch owners), a key created in the console asks for more than its creator’s ' +
    'current role allows, or it needs a signed-in console user and an API key was sent.',
  csrf_failed:
    'A request signed in with the console session cookie came ' +
    'without its CSRF token (X-CSRF-Token), or from another origin.',
  signup_closed: 'Sign-up is by invitation only on this server (SIGNUP=invite).',
  email_taken: 'A user with this email exists already.',
  invalid_credentials: 'Wrong email or password (the same answer for an unknown email).',
  invalid_token: 'The password-reset link is unknown, used or expired.',
  last_owner: 'An account keeps at least one owner: the last one cannot be removed or demoted.',
  already_member: 'The invited address is a member of the account already.',
  bad_gateway: 'The leadgate server behind the MCP stdio bridge answered something unexpected.',
  server_unreachable: 'The MCP stdio bridge could not reach the leadgate server.',
};

for (const endpoint of ENDPOINTS) {
  for (const code of Object.values(endpoint.errors).flat()) {
    if (!(code in REST_ERROR_CODES))
      throw new Error(`error code ${code} of ${endpoint.name} has no description in schema/errors.ts`);
  }
}

export const ErrorCodeEnum = builder.enumType('ErrorCode', {
  description:
    'Every error code of the API: the REST codes in SCREAMING_SNAKE_CASE (`validation_failed` ' +
    'is VALIDATION_FAILED), then the codes of GraphQL documents, variables and results. ' +
    '`UserError.code` and every top-level error’s `extensions.code` take one of them.',
  values: Object.fromEntries([
    ...Object.entries(REST_ERROR_CODES).map(([code, description]) => [
      graphQLCode(code),
      { value: graphQLCode(code), description: `${description} REST: \`${code}\`.` },
    ]),
    ...Object.entries(GRAPHQL_ERROR_CODES).map(([code, description]) => [
      code,
      { value: code, description: `${description} Top-level errors only.` },
    ]),
  ]) as Record<string, { value: string; description: string }>,
});

export interface UserError {
  code: string;
  field: string[] | null;
  message: string;
}

export const UserErrorRef = builder.objectRef<UserError>('UserError').implement({
  description: 'A mistake of the caller that a mutation refused: nothing was done. Branch on `code`; show `message`.',
  fields: (t) => ({
    code: t.field({
      type: ErrorCodeEnum,
      description: 'What went wrong, stable for programs.',
      resolve: (e) => e.code,
    }),
    field: t.stringList({
      nullable: true,
      description:
        'The path to the argument or input field at fault (`["input", ' +
        '"contacts", "0", "firstName"]`); null when no one field is.',
      resolve: (e) => e.field,
    }),
    message: t.string({ description: 'What went wrong and how to fix it, for people.', resolve: (e) => e.message }),
  }),
});

/** Refusals that stay top-level errors: who the caller is, how fast it calls, and our own failures. */
const isUserError = (err: AppError) => err.status !== 401 && err.code !== 'rate_limited' && err.status < 500;

/** Where a refusal's paths sit among the mutation's arguments: under one argument (`['input']`), or mapped. */
export type FieldRoot = readonly string[] | ((path: string[]) => string[]);

/**
 * An AppError as the mutation's `userErrors`: one per detail of a validation error (its path placed
 * by `root`), else one for the whole error.
 */
export function userErrorsOf(err: AppError, root: FieldRoot = []): UserError[] {
  const place = typeof root === 'function' ? root : (path: string[]) => [...root, ...path];
  const code = graphQLCode(err.code);
  const details = Array.isArray(err.details) ? (err.details as unknown[]) : [];
  const located = details.filter(
    (d): d is ErrorDetail =>
      typeof (d as ErrorDetail)?.path === 'string' && typeof (d as ErrorDetail).message === 'string',
  );
  if (located.length > 0 && located.length === details.length) {
    return located.map((d) => ({ code, field: place(graphQLPath(d.path)), message: graphQLMessage(d.message) }));
  }
  return [{ code, field: null, message: graphQLMessage(err.message) }];
}

/**
 * Runs a mutation: its result with no `userErrors`, or, when it refuses the caller's request, only
 * `userErrors` (every other field null). Authentication, rate limiting and internal failures stay
 * top-level errors. `root` is the argument that refusal paths are relative to (`input`).
 */
export async function mutationPayload<T extends object>(
  run: () => Promise<T>,
  root: FieldRoot = [],
): Promise<Partial<T> & { userErrors: UserError[] }> {
  try {
    return { ...(await run()), userErrors: [] };
  } catch (err) {
    if (err instanceof AppError && isUserError(err))
      return { userErrors: userErrorsOf(err, root) } as Partial<T> & { userErrors: UserError[] };
    throw err;
  }
}

/** What every payload's `userErrors` field says. */
export const USER_ERRORS_DESCRIPTION =
  'The caller’s mistakes that refused the mutation (then the other fields are null); empty when it succeeded.';
