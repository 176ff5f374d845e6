-- btree_gin: a GIN index that carries the company's industry (a btree-like key) beside the title's trigrams.
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
CREATE INDEX "person_industry_title_trgm" ON "person" USING gin ("company_industry","title" gin_trgm_ops);--> statement-breakpoint
DROP INDEX "person_title_trgm";
