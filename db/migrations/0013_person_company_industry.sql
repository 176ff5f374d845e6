-- The company's industry on the person (lower case), so that "title + industry + country" and the
-- like combine person and company filters in one bitmap scan of `person` instead of joining every
-- person of every matching company. The seeder and the importer write the copy with the row; the
-- triggers below keep it right for every other writer and follow changes of the company.
ALTER TABLE "person" ADD COLUMN "company_industry" text;--> statement-breakpoint
UPDATE "person" p SET "company_industry" = lower(c."industry") FROM "company" c WHERE c."id" = p."company_id" AND c."industry" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "person_company_industry_idx" ON "person" USING btree ("company_industry");--> statement-breakpoint
-- With the id, a company's people are counted and paged from the index alone.
DROP INDEX "person_company_idx";--> statement-breakpoint
CREATE INDEX "person_company_idx" ON "person" USING btree ("company_id","id");--> statement-breakpoint
-- A person written without the copy (or moved to another company without it) gets it from its company.
-- The WHEN clauses keep bulk writers that fill the copy themselves from paying for the trigger.
CREATE FUNCTION person_company_industry_fill() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  NEW.company_industry := (SELECT lower(c.industry) FROM company c WHERE c.id = NEW.company_id);
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER person_company_industry_on_insert BEFORE INSERT ON "person"
  FOR EACH ROW WHEN (NEW.company_id IS NOT NULL AND NEW.company_industry IS NULL)
  EXECUTE FUNCTION person_company_industry_fill();--> statement-breakpoint
CREATE TRIGGER person_company_industry_on_move BEFORE UPDATE OF company_id, company_industry ON "person"
  FOR EACH ROW WHEN (OLD.company_id IS DISTINCT FROM NEW.company_id AND OLD.company_industry IS NOT DISTINCT FROM NEW.company_industry)
  EXECUTE FUNCTION person_company_industry_fill();--> statement-breakpoint
-- A company whose industry changes passes it on to its people, once per statement.
CREATE FUNCTION company_industry_propagate() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE person p SET company_industry = lower(n.industry)
    FROM changed_new n JOIN changed_old o ON o.id = n.id
    WHERE p.company_id = n.id AND o.industry IS DISTINCT FROM n.industry;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER company_industry_propagate AFTER UPDATE ON "company"
  REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION company_industry_propagate();
