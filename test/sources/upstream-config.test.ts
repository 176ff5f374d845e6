import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createUpstreamEngine } from '../../src/runs/upstream.ts';
import { spawnService } from '../helpers/process.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

/** TOOL_SOURCES, APIFY_TOKEN and APIFY_BASE_URL: read at start; a bad value stops start-up with a message saying what to fix. */

const env = (values: Record<string, string>) => ({ APIFY_TOKEN: 'apify_api_x', ...values });

describe('reading TOOL_SOURCES', () => {
  it('reads tool=apify:<actorId> entries; a tool named alone takes its declared actor', () => {
    const config = loadConfig(env({ TOOL_SOURCES: 'maps=apify:compass/crawler-google-places, local-reviews=apify' }));
    expect(config.toolSources).toEqual({
      maps: { engine: 'apify', actorId: 'compass~crawler-google-places' },
      'local-reviews': { engine: 'apify', actorId: undefined },
    });
    expect(config.apify).toEqual({ token: 'apify_api_x', baseUrl: 'https://api.apify.com' });
    expect(createUpstreamEngine(config)).toBeDefined();
  });

  it('nothing configured: every tool reads the catalog and no engine is built', () => {
    const config = loadConfig({});
    expect(config.toolSources).toEqual({});
    expect(createUpstreamEngine(config)).toBeUndefined();
  });

  it.each([
    ['maps=scrapingbee', /TOOL_SOURCES takes tool=apify:<actorId>/],
    ['maps', /TOOL_SOURCES takes tool=apify:<actorId>/],
    ['maps=apify:../../v2/users/me', /is not an Apify actor id/],
    ['maps=apify,maps=apify:compass~crawler-google-places', /names maps twice/],
  ])('refuses %s', (value, message) => {
    expect(() => loadConfig(env({ TOOL_SOURCES: value }))).toThrow(message);
  });

  it('refuses TOOL_SOURCES without APIFY_TOKEN, and an APIFY_BASE_URL with a path', () => {
    expect(() => loadConfig({ TOOL_SOURCES: 'maps=apify' })).toThrow(/set APIFY_TOKEN/);
    expect(() => loadConfig(env({ APIFY_BASE_URL: 'https://api.apify.com/v2' }))).toThrow(
      /APIFY_BASE_URL takes an origin/,
    );
  });

  it('refuses a tool that does not exist and one that cannot run upstream', () => {
    expect(() => createUpstreamEngine(loadConfig(env({ TOOL_SOURCES: 'yellow-pages=apify' })))).toThrow(
      /yellow-pages, which is not a tool/,
    );
    expect(() => createUpstreamEngine(loadConfig(env({ TOOL_SOURCES: 'email-validator=apify' })))).toThrow(
      /email-validator, which cannot run upstream \(tools that can: maps/,
    );
  });
});

describe('start-up', { timeout: 60_000 }, () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it.each([
    [
      'the gateway',
      'TOOL_SOURCES has no APIFY_TOKEN',
      ['--import', 'tsx', 'src/main.ts'],
      { TOOL_SOURCES: 'maps=apify' },
      /set APIFY_TOKEN/,
    ],
    [
      'the gateway',
      'TOOL_SOURCES names no tool',
      ['--import', 'tsx', 'src/main.ts'],
      { TOOL_SOURCES: 'yellow-pages=apify', APIFY_TOKEN: 'apify_api_x' },
      /yellow-pages, which is not a tool/,
    ],
    [
      'a worker',
      'TOOL_SOURCES names a tool without a declaration',
      ['src/cli/leadgate.mjs', 'worker'],
      { TOOL_SOURCES: 'email-validator=apify', APIFY_TOKEN: 'apify_api_x' },
      /email-validator, which cannot run upstream/,
    ],
  ])('%s stops with a message when %s', async (_, __, args, values, message) => {
    const service = spawnService(args, {
      DATABASE_URL: database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      APIFY_TOKEN: '',
      ...values,
    });
    const code = await service.exited();
    expect(code).not.toBe(0);
    expect(service.output()).toMatch(message);
    expect(service.output()).not.toMatch(/listening on|worker started/);
  });
});
