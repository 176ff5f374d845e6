import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.ts';
import { appWithAccount, type TestApp } from '../../helpers/app.ts';

/**
 * A caller's mistake (a variable its type refuses) is answered to the caller and is no server error:
 * the console's tool forms send incomplete inputs while a user types, and each was logged at error level.
 */
describe('GraphQL caller errors in the log', () => {
  let t: TestApp;
  let key: string;
  const lines: { level: number; msg: string }[] = [];

  beforeAll(async () => {
    const logger = createLogger('debug', { write: (line: string) => void lines.push(JSON.parse(line)) });
    ({ t, key } = await appWithAccount({ app: { worker: false, logger } }));
  });
  afterAll(() => t?.stop());

  it('answers a variable that does not coerce as BAD_USER_INPUT and logs nothing at warn or above', async () => {
    lines.length = 0;
    const res = await t.request('POST', '/graphql', {
      key,
      body: {
        query:
          'mutation Start($input: StartLeadScrapeInput!) { startLeadScrape(input: $input, dryRun: true) { estimatedCost } }',
        variables: { input: {} },
      },
    });
    const body = res.body as { errors?: { message: string; extensions?: { code?: string } }[] };
    expect(body.errors?.[0]?.message).toMatch(/Variable "\$input" got invalid value/);
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await new Promise((r) => setTimeout(r, 50));
    const loud = lines.filter((l) => l.level >= 40);
    expect(loud.map((l) => l.msg)).toEqual([]);
  });
});
