import type { Role } from '../../db/schema/identity.ts';
import { AppError } from '../shared/errors.ts';
import type { Principal } from './principal.ts';

/**
 * Who may do what, in one place. Owners may do everything; admins manage keys, webhooks and members
 * (but never grant, change or remove an owner); members use the tools, runs, data and see the wallet
 * balance. Billing (buying credits, the ledger, the plan) is the owners'. An API key keeps every right
 * keys have always had (billing and webhooks included) but cannot manage keys, members or sessions:
 * that needs a signed-in owner or admin.
 */
export type Permission = 'billing' | 'webhooks' | 'keys' | 'members';

const ROLES_ALLOWED: Record<Permission, readonly Role[]> = {
  billing: ['owner'],
  webhooks: ['owner', 'admin'],
  keys: ['owner', 'admin'],
  members: ['owner', 'admin'],
};

const KEYS_ALLOWED: Record<Permission, boolean> = { billing: true, webhooks: true, keys: false, members: false };

const WHAT: Record<Permission, string> = {
  billing: 'Billing (credits, ledger, plan) is for the account’s owners',
  webhooks: 'Webhooks are managed by the account’s owners and admins',
  keys: 'API keys are managed by the account’s owners and admins, signed in to the console',
  members: 'Members are managed by the account’s owners and admins, signed in to the console',
};

export const roleRequired = (message: string) => new AppError(403, 'role_required', message);

export function may(principal: Principal, permission: Permission): boolean {
  return principal.role === undefined ? KEYS_ALLOWED[permission] : ROLES_ALLOWED[permission].includes(principal.role);
}

/** 403 `role_required` unless the caller may do `permission`. */
export function requireRole(principal: Principal, permission: Permission): void {
  if (!may(principal, permission)) throw roleRequired(`${WHAT[permission]}; ${principal.role ? `your role is ${principal.role}` : 'an API key cannot'}.`);
}

/** The signed-in user of a console session; 403 `role_required` for an API key. */
export function requireUser(principal: Principal): { userId: string; role: Role; sessionId: string } {
  if (!principal.userId || !principal.role || !principal.sessionId) throw roleRequired('This needs a signed-in user (a console session); an API key cannot.');
  return { userId: principal.userId, role: principal.role, sessionId: principal.sessionId };
}

/** Whether `actor` may give `role` to someone, or change or remove someone who has `current`: only owners touch owners. */
export function mayAssign(actor: Role, role: Role, current?: Role): boolean {
  if (actor === 'owner') return true;
  return actor === 'admin' && role !== 'owner' && current !== 'owner';
}
