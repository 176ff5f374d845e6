import { mapsUpstream } from './maps.ts';
import { localReviewsUpstream } from './local-reviews.ts';
import { leadScraperUpstream } from './lead-scraper.ts';
import { realtyAgentsUpstream } from './realty-agents.ts';
import { businessForSaleUpstream } from './business-for-sale.ts';
import { rentalHostsUpstream } from './rental-hosts.ts';
import type { UpstreamDeclaration } from './types.ts';

/** Every tool that can run on an upstream actor; adding one is adding its file and one line here. */
export const UPSTREAM_DECLARATIONS: readonly UpstreamDeclaration[] = [
  mapsUpstream,
  localReviewsUpstream,
  leadScraperUpstream,
  realtyAgentsUpstream,
  businessForSaleUpstream,
  rentalHostsUpstream,
];

const byTool = new Map(UPSTREAM_DECLARATIONS.map((d) => [d.tool, d]));

/** The upstream declaration of a tool, if it has one. */
export const upstreamDeclaration = (tool: string): UpstreamDeclaration | undefined => byTool.get(tool);
