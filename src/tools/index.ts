import { AppError } from '../services/errors.ts';
import { mapsTool } from './maps.ts';
import { leadScraperTool } from './lead-scraper.ts';
import { mobileFinderTool } from './mobile-finder.ts';
import { homeServicesTool } from './home-services.ts';
import { realtyAgentsTool } from './realty-agents.ts';
import { criminalRecordsTool } from './criminal-records.ts';
import { peopleFinderTool } from './people-finder.ts';
import { businessForSaleTool } from './business-for-sale.ts';
import { commercialPropertyTool } from './commercial-property.ts';
import { propertyLookupTool } from './property-lookup.ts';
import { propertyOwnerContactTool } from './property-owner-contact.ts';
import { dealFinderTool } from './deal-finder.ts';
import type { ToolDefinition } from './types.ts';

/** Every tool of the service; adding a tool is adding its file and one line here. */
export const TOOLS: readonly ToolDefinition[] = [mapsTool as unknown as ToolDefinition, leadScraperTool as unknown as ToolDefinition, mobileFinderTool as unknown as ToolDefinition, homeServicesTool as unknown as ToolDefinition, realtyAgentsTool as unknown as ToolDefinition, criminalRecordsTool as unknown as ToolDefinition, peopleFinderTool as unknown as ToolDefinition, businessForSaleTool as unknown as ToolDefinition, commercialPropertyTool as unknown as ToolDefinition, propertyLookupTool as unknown as ToolDefinition, propertyOwnerContactTool as unknown as ToolDefinition, dealFinderTool as unknown as ToolDefinition];

const byName = new Map(TOOLS.map((t) => [t.name, t]));

export function getTool(name: string): ToolDefinition {
  const tool = byName.get(name);
  if (!tool) throw new AppError(404, 'not_found', `Unknown tool ${name}`);
  return tool;
}
