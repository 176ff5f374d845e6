import { AppError } from '../shared/errors.ts';
import { mapsTool } from './maps.ts';
import { leadScraperTool } from './lead-scraper.ts';
import { storeLeadsTool } from './store-leads.ts';
import { homeServicesTool } from './home-services.ts';
import { businessForSaleTool } from './business-for-sale.ts';
import { techStackTool } from './tech-stack.ts';
import { commercialPropertyTool } from './commercial-property.ts';
import { realtyAgentsTool } from './realty-agents.ts';
import { localReviewsTool } from './local-reviews.ts';
import { rentalHostsTool } from './rental-hosts.ts';
import { propertyLookupTool } from './property-lookup.ts';
import { propertyOwnerContactTool } from './property-owner-contact.ts';
import { criminalRecordsTool } from './criminal-records.ts';
import { mobileFinderTool } from './mobile-finder.ts';
import { peopleFinderTool } from './people-finder.ts';
import { dealFinderTool } from './deal-finder.ts';
import { emailValidatorTool } from './email-validator.ts';
import { emailFinderTool } from './email-finder.ts';
import { websiteFinderTool } from './website-finder.ts';
import type { ToolDefinition } from './types.ts';

/** Each tool keeps its own input type; the registry holds them all under the common one. */
const registry = (...tools: ToolDefinition[]): readonly ToolDefinition[] => tools;

/** Every tool of the service, in the spec's order; adding a tool is adding its file and one line here. */
export const TOOLS = registry(
  mapsTool,
  leadScraperTool,
  storeLeadsTool,
  homeServicesTool,
  businessForSaleTool,
  techStackTool,
  commercialPropertyTool,
  realtyAgentsTool,
  localReviewsTool,
  rentalHostsTool,
  propertyLookupTool,
  propertyOwnerContactTool,
  criminalRecordsTool,
  mobileFinderTool,
  peopleFinderTool,
  dealFinderTool,
  emailValidatorTool,
  emailFinderTool,
  websiteFinderTool,
);

const byName = new Map(TOOLS.map((t) => [t.name, t]));

export function getTool(name: string): ToolDefinition {
  const tool = byName.get(name);
  if (!tool) throw new AppError(404, 'not_found', `Unknown tool ${name}`);
  return tool;
}
