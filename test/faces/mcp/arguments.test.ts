import { describe, expect, it } from 'vitest';
import { DEPARTMENTS, SENIORITIES } from '../../../db/tables/leads.ts';
import { HOME_SERVICE_CATEGORIES } from '../../../db/tables/home-services.ts';
import { MCP_TOOLS } from '../../../src/mcp/tools.ts';
import { EMAIL_CHECK_STATUSES, LEAD_EMAIL_STATUSES } from '../../../src/shared/email-status.ts';

/*
 * The arguments an agent reads in the tool list (issue 39): every one described, closed vocabularies
 * as enums, and the email statuses one vocabulary across the validator and the lead database.
 */

type Schema = { description?: string; enum?: string[]; items?: Schema; properties?: Record<string, Schema> };

/** Every argument (nested ones as `contacts[].first_name`) with its schema. */
function argumentsOf(schema: Schema, prefix = ''): [string, Schema][] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, prop]) => [
    [`${prefix}${name}`, prop] as [string, Schema],
    ...argumentsOf(prop, `${prefix}${name}.`),
    ...(prop.items ? argumentsOf(prop.items, `${prefix}${name}[].`) : []),
  ]);
}
const tool = (name: string) => MCP_TOOLS.find((t) => t.name === name)?.inputSchema as Schema;

describe('MCP tool arguments', () => {
  it('are all described, in one line', () => {
    const arguments_ = MCP_TOOLS.flatMap((t) => argumentsOf(t.inputSchema as Schema).map(([n, s]) => [t.name, n, s]));
    expect(arguments_.length).toBeGreaterThan(200);
    const undescribed = arguments_.filter(([, , s]) => !(s as Schema).description?.trim()).map(([t, n]) => `${t}.${n}`);
    expect(undescribed).toEqual([]);
    const multiline = arguments_
      .filter(([, , s]) => (s as Schema).description?.includes('\n'))
      .map(([t, n]) => `${t}.${n}`);
    expect(multiline).toEqual([]);
  });

  it('list the closed vocabularies of the lead database and the home-service categories', () => {
    const leads = tool('query_lead_database').properties ?? {};
    expect(leads.seniority?.items?.enum).toEqual([...SENIORITIES]);
    expect(leads.department?.items?.enum).toEqual([...DEPARTMENTS]);
    expect(tool('scrape_home_services').properties?.keyword?.enum).toEqual([...HOME_SERVICE_CATEGORIES]);
  });

  it('take the email validator’s statuses in the lead database’s filter, beside its own', () => {
    const statuses = tool('query_lead_database').properties?.emailStatus?.items?.enum ?? [];
    expect(statuses).toEqual([...LEAD_EMAIL_STATUSES, ...EMAIL_CHECK_STATUSES.filter((s) => s !== 'invalid')]);
  });
});
