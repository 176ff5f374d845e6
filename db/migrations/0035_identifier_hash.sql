CREATE TABLE "drop_cycle" (
	"id" text PRIMARY KEY NOT NULL,
	"file_name" text NOT NULL,
	"state" text DEFAULT 'reading' NOT NULL,
	"work_items" integer DEFAULT 0 NOT NULL,
	"removed" integer DEFAULT 0 NOT NULL,
	"deleted" integer DEFAULT 0 NOT NULL,
	"opted_out" integer DEFAULT 0 NOT NULL,
	"not_found" integer DEFAULT 0 NOT NULL,
	"records_deleted" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"answered_at" timestamp with time zone,
	"uploaded_at" timestamp with time zone,
	CONSTRAINT "drop_cycle_file_name_unique" UNIQUE("file_name")
);
--> statement-breakpoint
CREATE TABLE "drop_work_item" (
	"cycle_id" text NOT NULL,
	"file" text NOT NULL,
	"line" integer NOT NULL,
	"list_type" text NOT NULL,
	"work_item_id" text NOT NULL,
	"hash" text NOT NULL,
	"removed" boolean DEFAULT false NOT NULL,
	"status" smallint,
	CONSTRAINT "drop_work_item_cycle_id_file_line_pk" PRIMARY KEY("cycle_id","file","line")
);
--> statement-breakpoint
CREATE TABLE "identifier_hash" (
	"list_type" text NOT NULL,
	"hash" text NOT NULL,
	"source" text NOT NULL,
	"record_id" bigint,
	"run_id" text,
	"seq" integer
);
--> statement-breakpoint
ALTER TABLE "drop_work_item" ADD CONSTRAINT "drop_work_item_cycle_id_drop_cycle_id_fk" FOREIGN KEY ("cycle_id") REFERENCES "public"."drop_cycle"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identifier_hash" ADD CONSTRAINT "identifier_hash_run_id_run_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."run"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "identifier_hash_idx" ON "identifier_hash" USING btree ("hash","list_type");--> statement-breakpoint
CREATE INDEX "identifier_hash_record_idx" ON "identifier_hash" USING btree ("source","record_id");--> statement-breakpoint
CREATE INDEX "identifier_hash_run_idx" ON "identifier_hash" USING btree ("run_id","seq");--> statement-breakpoint
-- DROP's standardisation and hash (src/privacy/drop/standardize.ts, hash.ts), in SQL for the triggers
-- below; test/privacy/identifier-hash.test.ts keeps the two equal. E-mail: every character JavaScript's
-- \s names removed, then lower case. Phone: NFKC, digits only, the last ten.
CREATE FUNCTION drop_email_hash(value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
  SELECT CASE WHEN s = '' THEN NULL ELSE encode(sha256(convert_to(s, 'UTF8')), 'base64') END
  FROM (SELECT lower(regexp_replace(value, '[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]', '', 'g')) AS s) t
$$;--> statement-breakpoint
CREATE FUNCTION drop_phone_hash(value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
  SELECT CASE WHEN s = '' THEN NULL ELSE encode(sha256(convert_to(s, 'UTF8')), 'base64') END
  FROM (SELECT right(regexp_replace(normalize(value, NFKC), '[^0-9]', '', 'g'), 10) AS s) t
$$;--> statement-breakpoint
-- The identifiers each catalog source holds about a person, as (source, id, list type, hash) rows of a
-- relation named %1$s (the table, or a trigger's transition table).
CREATE FUNCTION identifier_hash_select(source text) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$
  SELECT CASE source
    WHEN 'person' THEN 'SELECT DISTINCT ''person'' AS source, r.id, x.list_type, x.hash FROM %1$s r
      CROSS JOIN LATERAL (VALUES (''email'', drop_email_hash(r.email)), (''phone'', drop_phone_hash(r.phone)),
        (''phone'', drop_phone_hash(r.mobile))) x(list_type, hash) WHERE x.hash IS NOT NULL'
    WHEN 'property' THEN 'SELECT DISTINCT ''property'' AS source, r.id, x.list_type, x.hash FROM %1$s r
      CROSS JOIN LATERAL (SELECT ''email'', drop_email_hash(e) FROM unnest(r.owner_emails) e
        UNION ALL SELECT ''phone'', drop_phone_hash(p) FROM unnest(r.owner_phones) p) x(list_type, hash)
      WHERE x.hash IS NOT NULL'
    WHEN 'rental_host' THEN 'SELECT DISTINCT ''rental_host'' AS source, r.id, x.list_type, x.hash FROM %1$s r
      CROSS JOIN LATERAL (VALUES (''email'', drop_email_hash(r.email)), (''phone'', drop_phone_hash(r.phone)))
        x(list_type, hash) WHERE x.hash IS NOT NULL'
  END
$$;--> statement-breakpoint
-- Every write to a source moves its rows' entries: the old rows' out, the new rows' in. TG_ARGV[0] is
-- the source's name.
CREATE FUNCTION identifier_hash_apply() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  source constant text := TG_ARGV[0];
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM identifier_hash h WHERE h.source = TG_ARGV[0];
    RETURN NULL;
  END IF;
  IF TG_OP = 'DELETE' THEN
    EXECUTE 'DELETE FROM identifier_hash h USING rows_out o WHERE h.source = $1 AND h.record_id = o.id' USING source;
  ELSIF TG_OP = 'INSERT' THEN
    EXECUTE 'INSERT INTO identifier_hash (source, record_id, list_type, hash) '
      || format(identifier_hash_select(source), 'rows_in');
  ELSE
    -- Only the entries that changed: an update of a title leaves the index alone.
    EXECUTE 'WITH o AS (' || format(identifier_hash_select(source), 'rows_out') || '), '
      || 'n AS (' || format(identifier_hash_select(source), 'rows_in') || '), '
      || 'gone AS (SELECT * FROM o EXCEPT SELECT * FROM n), '
      || 'd AS (DELETE FROM identifier_hash h USING gone g WHERE h.source = g.source AND h.record_id = g.id '
      || 'AND h.list_type = g.list_type AND h.hash = g.hash) '
      || 'INSERT INTO identifier_hash (source, record_id, list_type, hash) SELECT * FROM n EXCEPT SELECT * FROM o';
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_insert AFTER INSERT ON "person" REFERENCING NEW TABLE AS rows_in
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('person');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_update AFTER UPDATE ON "person" REFERENCING OLD TABLE AS rows_out NEW TABLE AS rows_in
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('person');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_delete AFTER DELETE ON "person" REFERENCING OLD TABLE AS rows_out
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('person');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_truncate AFTER TRUNCATE ON "person"
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('person');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_insert AFTER INSERT ON "property" REFERENCING NEW TABLE AS rows_in
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('property');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_update AFTER UPDATE ON "property" REFERENCING OLD TABLE AS rows_out NEW TABLE AS rows_in
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('property');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_delete AFTER DELETE ON "property" REFERENCING OLD TABLE AS rows_out
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('property');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_truncate AFTER TRUNCATE ON "property"
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('property');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_insert AFTER INSERT ON "rental_host" REFERENCING NEW TABLE AS rows_in
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('rental_host');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_update AFTER UPDATE ON "rental_host" REFERENCING OLD TABLE AS rows_out NEW TABLE AS rows_in
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('rental_host');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_delete AFTER DELETE ON "rental_host" REFERENCING OLD TABLE AS rows_out
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('rental_host');--> statement-breakpoint
CREATE TRIGGER identifier_hash_on_truncate AFTER TRUNCATE ON "rental_host"
  FOR EACH STATEMENT EXECUTE FUNCTION identifier_hash_apply('rental_host');--> statement-breakpoint
-- Also for writes made with session_replication_role = replica (bulk deletes, a replication subscriber).
ALTER TABLE "person" ENABLE ALWAYS TRIGGER identifier_hash_on_insert;--> statement-breakpoint
ALTER TABLE "person" ENABLE ALWAYS TRIGGER identifier_hash_on_update;--> statement-breakpoint
ALTER TABLE "person" ENABLE ALWAYS TRIGGER identifier_hash_on_delete;--> statement-breakpoint
ALTER TABLE "person" ENABLE ALWAYS TRIGGER identifier_hash_on_truncate;--> statement-breakpoint
ALTER TABLE "property" ENABLE ALWAYS TRIGGER identifier_hash_on_insert;--> statement-breakpoint
ALTER TABLE "property" ENABLE ALWAYS TRIGGER identifier_hash_on_update;--> statement-breakpoint
ALTER TABLE "property" ENABLE ALWAYS TRIGGER identifier_hash_on_delete;--> statement-breakpoint
ALTER TABLE "property" ENABLE ALWAYS TRIGGER identifier_hash_on_truncate;--> statement-breakpoint
ALTER TABLE "rental_host" ENABLE ALWAYS TRIGGER identifier_hash_on_insert;--> statement-breakpoint
ALTER TABLE "rental_host" ENABLE ALWAYS TRIGGER identifier_hash_on_update;--> statement-breakpoint
ALTER TABLE "rental_host" ENABLE ALWAYS TRIGGER identifier_hash_on_delete;--> statement-breakpoint
ALTER TABLE "rental_host" ENABLE ALWAYS TRIGGER identifier_hash_on_truncate;--> statement-breakpoint
-- The records already there: the index built once.
DO $$ BEGIN
  EXECUTE 'INSERT INTO identifier_hash (source, record_id, list_type, hash) ' || format(identifier_hash_select('person'), 'person');
  EXECUTE 'INSERT INTO identifier_hash (source, record_id, list_type, hash) ' || format(identifier_hash_select('property'), 'property');
  EXECUTE 'INSERT INTO identifier_hash (source, record_id, list_type, hash) ' || format(identifier_hash_select('rental_host'), 'rental_host');
END $$;
