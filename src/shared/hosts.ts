/**
 * A website, URL or domain as a bare host: trimmed, lower case, without a scheme ("https://"), one
 * leading "www." and everything from the first ":", "/", "?" or "#" on (port, path, query, fragment).
 * "https://www.Acme.com:8080/about" → "acme.com". Nothing is checked: what is left may not be a domain.
 *
 * Its SQL twin is `placeHostSql` (db/tables/local-businesses.ts), whose expression an index of
 * local_business holds; the two must keep the same rules (changing them means a migration).
 *
 * Every place that reads a host from a caller's website, domain or link uses this rule; the tools that
 * need a checked mail domain add their checks on top (tools/lib/email/domains.ts `companyDomain`), and a
 * social profile link keeps its path (`normaliseSocialUrl`, catalog/leads/query.ts).
 */
export const bareHost = (value: string) =>
  value
    .trim()
    .toLowerCase()
    .replace(/^[a-z]+:\/\//, '')
    .replace(/^www\./, '')
    .replace(/[/?#:].*$/, '');
