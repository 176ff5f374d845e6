import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EndpointDefinition } from '../../src/endpoints/define.ts';
import { ENDPOINTS } from '../../src/endpoints/index.ts';
import { MCP_TOOLS } from '../../src/mcp/tools.ts';
import { TOOLS } from '../../src/tools/index.ts';
import { fuzzSuite } from '../helpers/fuzz-suite.ts';
import {
  assertHealthy,
  checkWrites,
  describeCase,
  FUZZ_CASES,
  fuzzParameters,
  mcpCase,
  mcpVerdict,
  routeTimeout,
  type Lane,
  type McpToolInfo,
} from '../helpers/fuzz.ts';

/*
 * Every tool of the MCP server at /mcp, fuzzed (test/helpers/fuzz.ts): arguments from its input
 * schema or its working example with one change, arguments that are no object, broken JSON-RPC
 * envelopes and batches. No answer is a 5xx or a JSON-RPC internal error, every tool error carries the
 * REST error body (never internal_error), a refused call writes nothing, and /health answers after each tool.
 */

/** A working input of each tool, where the registry has one: the tool's example, an endpoint's REST example. */
const EXAMPLES = new Map<string, unknown>([
  ...TOOLS.filter((tool) => !tool.linkedOnly && tool.example !== undefined).map(
    (tool) => [tool.mcp.name, tool.example] as const,
  ),
  ...(ENDPOINTS as readonly EndpointDefinition[])
    .filter((e) => e.mcp && e.rest.example !== undefined)
    .map((e) => [e.mcp!.tool, e.rest.example] as const),
]);

const suite = fuzzSuite('MCP', 'tool');

const post = (key: string, body: unknown) =>
  fetch(`${suite.t.url}/mcp?tools=all`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(body),
  });

it('fuzzes every tool the server lists', async () => {
  const { apiKey } = await suite.t.account();
  const res = await post(apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const listed = ((await res.json()) as { result: { tools: { name: string }[] } }).result.tools.map(
    (tool) => tool.name,
  );
  expect(listed.sort()).toEqual(MCP_TOOLS.map((tool) => tool.name).sort());
});

describe.concurrent(`every MCP tool, ${FUZZ_CASES} generated calls each`, () => {
  for (const tool of MCP_TOOLS) {
    const info: McpToolInfo = { name: tool.name, inputSchema: tool.inputSchema, example: EXAMPLES.get(tool.name) };
    it(
      tool.name,
      async () => {
        let cases = 0;
        await suite.pool.use(async (lane: Lane) => {
          const calls = mcpCase(info, { ids: lane.ids });
          await fc.assert(
            fc.asyncProperty(calls, async (message) => {
              cases++;
              const what = () => describeCase(message);
              let answer: { status: number; text: string };
              try {
                const res = await post(lane.key, message);
                answer = { status: res.status, text: await res.text() };
              } catch (err) {
                throw new Error(`the transfer broke (${(err as Error).message})\n${what()}`);
              }
              const verdict = mcpVerdict(answer.status, answer.text);
              suite.statuses.count(tool.name, verdict.refused ? `${answer.status} refused` : `${answer.status}`);
              if (verdict.violation) throw new Error(`${verdict.violation}\n${what()}`);
              await checkWrites(suite.t, lane, verdict.refused, what);
            }),
            fuzzParameters(),
          );
        });
        expect(cases).toBeGreaterThanOrEqual(FUZZ_CASES);
        await assertHealthy(suite.t);
      },
      routeTimeout(),
    );
  }
});
