import { getOperationAST, Kind, print, type DocumentNode } from 'graphql';
import type { Principal } from '../../src/accounts/accounts.ts';

/** Subscriptions whose executions many clients can share: their result depends only on the run and the account. */
const SHAREABLE = new Set(['runProgress']);

/** Documents printed for share keys (parsed documents are cached, so a document is usually printed once). */
const printed = new WeakMap<DocumentNode, string>();

/** The key under which identical subscriptions of one account share an execution, or undefined. */
export function shareKey(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: unknown,
  principal: Principal | undefined,
): string | undefined {
  const operation = getOperationAST(document, operationName);
  if (!principal || operation?.operation !== 'subscription') return undefined;
  const fields = operation.selectionSet.selections;
  const [field] = fields;
  if (fields.length !== 1 || field?.kind !== Kind.FIELD || !SHAREABLE.has(field.name.value)) return undefined;
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  // Members share an execution only with callers of the same rights, so no field resolves for one with another's.
  return JSON.stringify([
    principal.accountId,
    principal.role ?? null,
    principal.keyRole ?? null,
    text,
    operationName ?? null,
    variables ?? null,
  ]);
}
