import { createRequire } from 'node:module';
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';

const require = createRequire(import.meta.url);

const DISPOSABLE = disposableEmailBlocklistSet();
/** Free webmail providers (the email-providers list: gmail.com, gmx.de, yahoo.co.jp, …). */
const FREE = new Set<string>(require('email-providers/all.json') as string[]);

/** Local parts that name a function or a team rather than a person. */
const ROLES = new Set([
  'abuse',
  'accounting',
  'accounts',
  'admin',
  'administrator',
  'billing',
  'booking',
  'bookings',
  'careers',
  'contact',
  'contactus',
  'customercare',
  'customerservice',
  'dev',
  'devnull',
  'enquiries',
  'enquiry',
  'events',
  'feedback',
  'finance',
  'help',
  'helpdesk',
  'hello',
  'hostmaster',
  'hr',
  'info',
  'inquiries',
  'inquiry',
  'investor',
  'investors',
  'it',
  'jobs',
  'legal',
  'mail',
  'mailer-daemon',
  'marketing',
  'media',
  'news',
  'newsletter',
  'no-reply',
  'noreply',
  'do-not-reply',
  'donotreply',
  'office',
  'operations',
  'orders',
  'partners',
  'payments',
  'postmaster',
  'pr',
  'press',
  'privacy',
  'recruiting',
  'recruitment',
  'reservations',
  'root',
  'sales',
  'security',
  'service',
  'services',
  'shop',
  'staff',
  'store',
  'support',
  'team',
  'tech',
  'webmaster',
  'welcome',
  'www',
]);

/** Also true for subdomains of a listed domain (x.mailinator.com). */
function inList(list: Set<string>, domain: string): boolean {
  for (let d = domain; d.includes('.'); d = d.slice(d.indexOf('.') + 1)) if (list.has(d)) return true;
  return false;
}

export const isDisposableDomain = (domain: string) => inList(DISPOSABLE, domain.toLowerCase());
export const isFreeWebmailDomain = (domain: string) => FREE.has(domain.toLowerCase());
/** "sales", "Sales+leads" and "no.reply" are role accounts; "it.smith" is a person. */
export function isRoleAccount(local: string): boolean {
  const base = local.toLowerCase().replace(/^"|"$/g, '').split('+')[0] ?? '';
  return ROLES.has(base) || ROLES.has(base.replace(/[._-]/g, ''));
}
