-- A place's latest reviews (newest first, then highest id), as enrichment returns them: with the id in
-- the index they are read backwards from it, without a sort per place.
DROP INDEX "local_business_review_business_idx";--> statement-breakpoint
CREATE INDEX "local_business_review_business_idx" ON "local_business_review" USING btree ("business_id","published_at","id");