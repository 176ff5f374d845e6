-- The facet counts must follow every write to person, also one made with session_replication_role =
-- replica (bulk deletes use it to skip foreign-key checks, and a logical-replication subscriber applies
-- changes under it), which fires only the triggers enabled ALWAYS or REPLICA.
ALTER TABLE "person" ENABLE ALWAYS TRIGGER person_facet_count_on_insert;--> statement-breakpoint
ALTER TABLE "person" ENABLE ALWAYS TRIGGER person_facet_count_on_update;--> statement-breakpoint
ALTER TABLE "person" ENABLE ALWAYS TRIGGER person_facet_count_on_delete;--> statement-breakpoint
ALTER TABLE "person" ENABLE ALWAYS TRIGGER person_facet_count_on_truncate;--> statement-breakpoint
-- Counted again from the people, in case such a write went past the triggers before.
LOCK TABLE "person" IN SHARE MODE;--> statement-breakpoint
TRUNCATE person_facet_count;--> statement-breakpoint
INSERT INTO person_facet_count (country, seniority, department, company_industry, email_status, has_email, has_phone, people)
SELECT lower(country), seniority, department, company_industry, email_status, email IS NOT NULL, (phone IS NOT NULL OR mobile IS NOT NULL), count(*)::int
FROM person GROUP BY 1, 2, 3, 4, 5, 6, 7;
