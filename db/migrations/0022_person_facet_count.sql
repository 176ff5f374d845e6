CREATE TABLE "person_facet_count" (
	"country" text,
	"seniority" text,
	"department" text,
	"company_industry" text,
	"email_status" text,
	"has_email" boolean NOT NULL,
	"has_phone" boolean NOT NULL,
	"people" integer NOT NULL,
	CONSTRAINT "person_facet_count_key" UNIQUE NULLS NOT DISTINCT("country","seniority","department","company_industry","email_status","has_email","has_phone")
);
--> statement-breakpoint
-- Every write to person moves its people's facets: the rows in count +1, the rows out -1, summed per
-- combination and applied in key order (concurrent writers lock the rows they share in the same
-- order). Combinations whose people cancel out (an update that moves no facet) write nothing. The
-- statement is built per operation because an INSERT trigger has no table of old rows to name.
CREATE FUNCTION person_facet_count_apply() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  facets constant text := 'SELECT lower(%1$s.country) AS country, %1$s.seniority, %1$s.department, %1$s.company_industry, %1$s.email_status,
    %1$s.email IS NOT NULL AS has_email, (%1$s.phone IS NOT NULL OR %1$s.mobile IS NOT NULL) AS has_phone, %2$s AS sign FROM %1$s';
  moved text;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE person_facet_count;
    RETURN NULL;
  END IF;
  moved := CASE TG_OP
    WHEN 'INSERT' THEN format(facets, 'people_in', 1)
    WHEN 'DELETE' THEN format(facets, 'people_out', -1)
    ELSE format(facets, 'people_in', 1) || ' UNION ALL ' || format(facets, 'people_out', -1)
  END;
  EXECUTE 'INSERT INTO person_facet_count AS f (country, seniority, department, company_industry, email_status, has_email, has_phone, people)
    SELECT country, seniority, department, company_industry, email_status, has_email, has_phone, sum(sign)::int
    FROM (' || moved || ') facets
    GROUP BY 1, 2, 3, 4, 5, 6, 7
    HAVING sum(sign) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT ON CONSTRAINT person_facet_count_key DO UPDATE SET people = f.people + excluded.people';
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER person_facet_count_on_insert AFTER INSERT ON "person"
  REFERENCING NEW TABLE AS people_in
  FOR EACH STATEMENT EXECUTE FUNCTION person_facet_count_apply();--> statement-breakpoint
CREATE TRIGGER person_facet_count_on_update AFTER UPDATE ON "person"
  REFERENCING OLD TABLE AS people_out NEW TABLE AS people_in
  FOR EACH STATEMENT EXECUTE FUNCTION person_facet_count_apply();--> statement-breakpoint
CREATE TRIGGER person_facet_count_on_delete AFTER DELETE ON "person"
  REFERENCING OLD TABLE AS people_out
  FOR EACH STATEMENT EXECUTE FUNCTION person_facet_count_apply();--> statement-breakpoint
CREATE TRIGGER person_facet_count_on_truncate AFTER TRUNCATE ON "person"
  FOR EACH STATEMENT EXECUTE FUNCTION person_facet_count_apply();--> statement-breakpoint
-- The people already there.
INSERT INTO person_facet_count (country, seniority, department, company_industry, email_status, has_email, has_phone, people)
SELECT lower(country), seniority, department, company_industry, email_status, email IS NOT NULL, (phone IS NOT NULL OR mobile IS NOT NULL), count(*)::int
FROM person GROUP BY 1, 2, 3, 4, 5, 6, 7;
