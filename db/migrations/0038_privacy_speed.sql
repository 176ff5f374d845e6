CREATE TABLE "drop_gone_hash" (
	"cycle_id" text NOT NULL,
	"list_type" text NOT NULL,
	"hash" text NOT NULL,
	CONSTRAINT "drop_gone_hash_cycle_id_list_type_hash_pk" PRIMARY KEY("cycle_id","list_type","hash")
);
--> statement-breakpoint
ALTER TABLE "drop_gone_hash" ADD CONSTRAINT "drop_gone_hash_cycle_id_drop_cycle_id_fk" FOREIGN KEY ("cycle_id") REFERENCES "public"."drop_cycle"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "delivered_lead_person_idx" ON "delivered_lead" USING btree ("person_id");--> statement-breakpoint
CREATE INDEX "drop_work_item_open_idx" ON "drop_work_item" USING btree ("cycle_id","file","line") WHERE "drop_work_item"."status" is null and not "drop_work_item"."removed";--> statement-breakpoint
-- The same rows as 0035's, built with unnest: a LATERAL VALUES list is planned again for every row
-- (about 40 µs a person); the index's insert trigger cost a catalog import twice its time.
CREATE OR REPLACE FUNCTION identifier_hash_select(source text) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$
  SELECT CASE source
    WHEN 'person' THEN 'SELECT DISTINCT ''person'' AS source, r.id, x.list_type, x.hash FROM %1$s r
      CROSS JOIN LATERAL unnest(ARRAY[''email'', ''phone'', ''phone''],
        ARRAY[drop_email_hash(r.email), drop_phone_hash(r.phone), drop_phone_hash(r.mobile)]) x(list_type, hash)
      WHERE x.hash IS NOT NULL'
    WHEN 'property' THEN 'SELECT DISTINCT ''property'' AS source, r.id, x.list_type, x.hash FROM %1$s r
      CROSS JOIN LATERAL (SELECT ''email'', drop_email_hash(e) FROM unnest(r.owner_emails) e
        UNION ALL SELECT ''phone'', drop_phone_hash(p) FROM unnest(r.owner_phones) p) x(list_type, hash)
      WHERE x.hash IS NOT NULL'
    WHEN 'rental_host' THEN 'SELECT DISTINCT ''rental_host'' AS source, r.id, x.list_type, x.hash FROM %1$s r
      CROSS JOIN LATERAL unnest(ARRAY[''email'', ''phone''],
        ARRAY[drop_email_hash(r.email), drop_phone_hash(r.phone)]) x(list_type, hash)
      WHERE x.hash IS NOT NULL'
  END
$$;
