-- Enrichment by company domain returns the company's first contact (CEO, other C-suite, VP, Director
-- or head, then others; lowest id first): with the rank in the index that is one probe per company
-- instead of reading and sorting all its people. Counting a company's people stays index-only.
DROP INDEX "person_company_idx";--> statement-breakpoint
CREATE INDEX "person_company_idx" ON "person" USING btree ("company_id",(case when title ~* '^(ceo|chief executive officer)$' then 0 when seniority = 'c_suite' then 1 when seniority = 'vp' then 2 when seniority in ('director', 'head') then 3 else 4 end),"id");