import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlSite, linkScore } from '../../../src/tools/lib/email/crawl.ts';
import { LOOPBACK, type LocalWeb, type Sites, type Zone } from '../../fixtures/net.ts';
import { startNetworkedTestApp, type NetworkedTestApp } from '../../helpers/network.ts';

/*
 * A link whose percent-escapes are not UTF-8 (`/team%E0%A4`) is skipped by the domain crawler; the
 * rest of the site is read as usual. It used to throw out of the crawl, so the whole site was
 * reported unreachable and every contact on it was lost.
 */

const page = (body: string) => `<!doctype html><html><head><title>Site</title></head><body>${body}</body></html>`;
const SITE = 'badlink.test';
const sites: Sites = {
  [SITE]: {
    '/': page(
      '<nav><a href="/team%E0%A4">Team (old link)</a> <a href="/about%ZZ">About</a> <a href="/team">Our Team</a></nav>',
    ),
    '/team': page(
      '<section><div class="team-member"><h3>Nora Quill</h3><p class="position">Chief Executive Officer</p></div></section>',
    ),
  },
};
const zone: Zone = { [SITE]: LOOPBACK };

let t: NetworkedTestApp<LocalWeb>;
let key: string;

beforeAll(async () => {
  t = await startNetworkedTestApp({ zone, mailboxes: {}, sites });
  ({ apiKey: key } = await t.account());
});
afterAll(() => t?.stop());

describe('a malformed link on a site', () => {
  it('scores 0, so the crawler never queues it', () => {
    expect(linkScore(new URL('https://acme.com/team%E0%A4'), 'Team')).toBe(0);
    expect(linkScore(new URL('https://acme.com/team'), 'Team')).toBe(10);
  });

  it('is skipped by the crawl, which reads the good links and finds the people', async () => {
    const crawl = await crawlSite(t.app.core.sources.contacts.web, SITE, { userAgent: 'leadgate-crawler' });
    expect(crawl).toMatchObject({ status: 'ok', reason: null });
    expect(crawl.pages.map((p) => new URL(p.url).pathname)).toEqual(['/', '/team']);
    expect(crawl.people).toEqual([expect.objectContaining({ name: 'Nora Quill', title: 'Chief Executive Officer' })]);
    expect(t.web.requests.filter((r) => r.startsWith(`${SITE} /team%E0`))).toEqual([]);
  });

  it('leaves the domain email finder with the site’s contacts', async () => {
    const { status, rows } = await t.runTool(
      key,
      '/api/v1/scrape/website-finder',
      { domains: [SITE], jobTitle: 'CEO' },
      20_000,
    );
    expect(status.status).toBe('SUCCEEDED');
    expect(rows).toEqual([
      expect.objectContaining({
        domain: SITE,
        status: 'found',
        site_status: 'ok',
        full_name: 'Nora Quill',
        title: 'Chief Executive Officer',
        pages_crawled: 2,
      }),
    ]);
  });
});
