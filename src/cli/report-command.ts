import { InvalidArgumentError, type Command } from 'commander';
import type { Database } from '../../db/client.ts';
import { formatDollars } from '../billing/money.ts';
import { marginReport, type ToolMargin } from '../billing/margin.ts';

type WithDatabase = <T>(fn: (db: Database) => Promise<T>) => Promise<T>;

const UNIT_MS = { h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** "7d", "24h", "2w": a span back from now. */
function span(value: string): number {
  const match = /^(\d{1,4})([hdw])$/.exec(value.trim());
  if (!match || Number(match[1]) === 0) throw new InvalidArgumentError('expected a span such as 24h, 7d or 2w');
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

const percent = (m: ToolMargin) =>
  m.revenueMicros > 0n ? `${((Number(m.marginMicros) / Number(m.revenueMicros)) * 100).toFixed(1)}%` : '-';

function table(margins: ToolMargin[]): string {
  const total: ToolMargin = {
    tool: 'total',
    runs: 0,
    upstreamRuns: 0,
    revenueMicros: 0n,
    upstreamCostMicros: 0n,
    marginMicros: 0n,
  };
  for (const m of margins) {
    total.runs += m.runs;
    total.upstreamRuns += m.upstreamRuns;
    total.revenueMicros += m.revenueMicros;
    total.upstreamCostMicros += m.upstreamCostMicros;
    total.marginMicros += m.marginMicros;
  }
  const lines = [...margins, total].map((m) => [
    m.tool,
    String(m.runs),
    String(m.upstreamRuns),
    formatDollars(m.revenueMicros),
    formatDollars(m.upstreamCostMicros),
    formatDollars(m.marginMicros),
    percent(m),
  ]);
  const header = ['tool', 'runs', 'upstream runs', 'revenue USD', 'upstream cost USD', 'margin USD', 'margin'];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]?.length ?? 0)));
  const format = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [format(header), ...lines.map(format)].join('\n');
}

/** `leadgate report margin --since 7d`: revenue, upstream cost and margin per tool (docs/upstream.md). */
export function registerReportCommand(program: Command, withDatabase: WithDatabase) {
  const report = program.command('report').description('operator reports');
  report
    .command('margin')
    .description('revenue, upstream cost and margin per tool, over the runs created in a span back from now')
    .option('--since <span>', 'how far back: 24h, 7d, 2w…', span, UNIT_MS.d * 7)
    .option('--json', 'print the rows as JSON (amounts in USD, as text)')
    .action(async (opts: { since: number; json?: boolean }) => {
      const since = new Date(Date.now() - opts.since);
      const margins = await withDatabase((db) => marginReport(db, since));
      if (opts.json) {
        const usd = (m: bigint) => formatDollars(m);
        console.log(
          JSON.stringify({
            since: since.toISOString(),
            tools: margins.map((m) => ({
              tool: m.tool,
              runs: m.runs,
              upstreamRuns: m.upstreamRuns,
              revenueUsd: usd(m.revenueMicros),
              upstreamCostUsd: usd(m.upstreamCostMicros),
              marginUsd: usd(m.marginMicros),
            })),
          }),
        );
      } else {
        console.log(`Runs created since ${since.toISOString()}\n${table(margins)}`);
      }
    });
}
