import { ROLES, type Role } from '../../db/tables/identity.ts';
import { AppError } from '../shared/errors.ts';
import type { Principal } from './principal.ts';

/**
 * Who may do what, in one place. Owners may do everything; admins manage keys, webhooks and members
 * (but never grant, change or remove an owner), connect providers (CRMs, sheets, chat), take people
 * off the do-not-contact list (anyone may put them on it) and read the audit log; members use
 * the tools, runs, data and connections and see the wallet balance. Billing (buying credits, the ledger,
 * the plan) is the owners'.
 *
 * An API key never manages keys, members or sessions (that needs a signed-in owner or admin). Within
 * that, a key created in the console is bounded by its creator, as a fine-grained token is by its
 * owner: it has the key rights its creator's current role also has (`Principal.keyRole`, read at
 * authentication), so an admin's key manages webhooks but cannot read the ledger or buy credits, and
 * it narrows when its creator is demoted; a creator leaving the account revokes it (members.ts). The
 * operator's keys (CLI, demo: no creator) keep every key right, billing and webhooks included.
 */
export const PERMISSIONS = ['billing', 'webhooks', 'keys', 'members', 'connections', 'suppressions', 'audit'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** What a role may do, in PERMISSIONS' order: what the console shows a signed-in user. */
export const permissionsOfRole = (role: Role): Permission[] =>
  PERMISSIONS.filter((permission) => ROLES_ALLOWED[permission].includes(role));

const ROLES_ALLOWED: Record<Permission, readonly Role[]> = {
  billing: ['owner'],
  webhooks: ['owner', 'admin'],
  keys: ['owner', 'admin'],
  members: ['owner', 'admin'],
  connections: ['owner', 'admin'],
  suppressions: ['owner', 'admin'],
  audit: ['owner', 'admin'],
};

const KEYS_ALLOWED: Record<Permission, boolean> = {
  billing: true,
  webhooks: true,
  keys: false,
  members: false,
  connections: true,
  suppressions: true,
  // Scripts pull the log with a key (GET /api/v1/audit-events), within its creator's role.
  audit: true,
};

const WHAT: Record<Permission, string> = {
  billing: 'Billing (credits, ledger, plan) is for the account’s owners',
  webhooks: 'Webhooks are managed by the account’s owners and admins',
  keys: 'API keys are managed by the account’s owners and admins, signed in to the console',
  members: 'Members are managed by the account’s owners and admins, signed in to the console',
  connections: 'Connections to CRMs, sheets and chat are made and removed by the account’s owners and admins',
  suppressions: 'Entries are taken off the do-not-contact list by the account’s owners and admins',
  audit: 'The audit log is read and exported by the account’s owners and admins',
};

export const roleRequired = (message: string) => new AppError(403, 'role_required', message);

const A_ROLE: Record<Role, string> = { owner: 'an owner', admin: 'an admin', member: 'a member' };

/** Whether a console user of `role` may do `permission`. */
export const roleMay = (role: Role, permission: Permission): boolean => ROLES_ALLOWED[permission].includes(role);

export function may(principal: Principal, permission: Permission): boolean {
  if (principal.role !== undefined) return ROLES_ALLOWED[permission].includes(principal.role);
  return (
    KEYS_ALLOWED[permission] &&
    (principal.keyRole === undefined || ROLES_ALLOWED[permission].includes(principal.keyRole))
  );
}

/** Why the caller may not do `permission`, in plain words. */
function refusal(principal: Principal, permission: Permission): string {
  if (principal.role) return `${WHAT[permission]}; your role is ${principal.role}.`;
  if (!KEYS_ALLOWED[permission] || !principal.keyRole) return `${WHAT[permission]}; an API key cannot.`;
  const what = WHAT[permission];
  return (
    `This key acts with the rights of its creator, ${A_ROLE[principal.keyRole]}; ` +
    `${what.charAt(0).toLowerCase()}${what.slice(1)}.`
  );
}

/** 403 `role_required` unless the caller may do `permission`. */
export function requireRole(principal: Principal, permission: Permission): void {
  if (!may(principal, permission)) throw roleRequired(refusal(principal, permission));
}

/** The signed-in user of a console session; 403 `role_required` for an API key. */
export function requireUser(principal: Principal): { userId: string; role: Role; sessionId: string } {
  if (!principal.userId || !principal.role || !principal.sessionId)
    throw roleRequired('This needs a signed-in user (a console session); an API key cannot.');
  return { userId: principal.userId, role: principal.role, sessionId: principal.sessionId };
}

/**
 * Whether `actor` may give `role` to someone, or change or remove someone who has `current`: only owners touch owners.
 */
export function mayAssign(actor: Role, role: Role, current?: Role): boolean {
  if (actor === 'owner') return true;
  return actor === 'admin' && role !== 'owner' && current !== 'owner';
}

/**
 * The roles `actor` may give, fewest rights first (ROLES lists the most first): by mayAssign, the members
 * they may change or remove are exactly those holding one of them. What the console offers a signed-in user.
 */
export const assignableRoles = (actor: Role): Role[] =>
  [...ROLES].reverse().filter((role) => mayAssign(actor, role, role));
