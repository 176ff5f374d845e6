/**
 * Toolsets: the groups an MCP client chooses its tools by (as GitHub's `X-MCP-Toolsets` and Apify's
 * `?tools=`), and what an OAuth grant is limited to. Each tool and endpoint with an MCP face declares
 * its toolset; the run tools come with any toolset whose tools start runs.
 */
export const TOOLSETS = {
  maps: 'Local businesses from maps, and their reviews.',
  directories: 'Businesses and people from directories and sites: trades, agents, hosts, stores, tech stacks, links.',
  listings: 'Businesses and properties for sale or lease, and deals.',
  emails: 'Emails found for people and domains, and emails validated.',
  enrichment: 'Mobiles, property owners, and leads or businesses enriched from the catalog.',
  database: 'The lead database and public records: people, companies, properties, court records.',
  runs: 'Status, rows, cancellation and quotes of the runs the other tools start.',
  datasets: 'Named datasets: rows kept across runs, one a result, and only new rows delivered.',
  workflows: 'Saved tasks, the schedules that fire them, and pipelines that chain tools.',
  destinations: 'Connections to CRMs and chat, destinations that receive rows, and delivery logs.',
  privacy: 'The do-not-contact list: people no run, search or enrichment may return.',
  account: 'The wallet: balance and allowances.',
} as const;

export type Toolset = keyof typeof TOOLSETS;

export const TOOLSET_NAMES = Object.keys(TOOLSETS) as Toolset[];

export const isToolset = (name: string): name is Toolset => Object.hasOwn(TOOLSETS, name);
