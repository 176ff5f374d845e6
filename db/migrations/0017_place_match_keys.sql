-- Local-business enrichment matches a name with a city, a name with a postal code, and a website's
-- bare host: indexes on those very expressions (db/schema/local-businesses.ts) instead of a scan of
-- every place. The host index also answers the lookups by website that lower(website) served.
DROP INDEX "local_business_website_idx";--> statement-breakpoint
CREATE INDEX "local_business_name_city_idx" ON "local_business" USING btree ((trim(regexp_replace(lower(name), '[^a-z0-9]+', ' ', 'g'))),lower("city"));--> statement-breakpoint
CREATE INDEX "local_business_name_postal_idx" ON "local_business" USING btree ((trim(regexp_replace(lower(name), '[^a-z0-9]+', ' ', 'g'))),"postal_code");--> statement-breakpoint
CREATE INDEX "local_business_host_idx" ON "local_business" USING btree ((regexp_replace(regexp_replace(lower(btrim(website)), '^([a-z]+://)?(www\.)?', ''), '[/?#:].*$', '')));--> statement-breakpoint
-- Statistics on the new expressions, so the planner sees how selective they are.
ANALYZE "local_business";
