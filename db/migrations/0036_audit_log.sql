CREATE TABLE "audit_event" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_event_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" text,
	"actor_type" text NOT NULL,
	"actor_id" text,
	"actor_label" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text,
	"target_id" text,
	"target_label" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"ip" text,
	"user_agent" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_event_account_idx" ON "audit_event" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "audit_event_account_action_idx" ON "audit_event" USING btree ("account_id","action","id");--> statement-breakpoint
CREATE INDEX "audit_event_account_actor_idx" ON "audit_event" USING btree ("account_id","actor_id","id");--> statement-breakpoint
CREATE INDEX "audit_event_created_idx" ON "audit_event" USING btree ("created_at");--> statement-breakpoint
-- The log is append-only (docs/audit.md): no row is ever changed, and none deleted until it is past the
-- retention period (AUDIT_RETENTION_DAYS in db/tables/audit.ts: 730 days), which the hourly housekeeping
-- deletes. TRUNCATE is refused too. Dropping the triggers takes DDL by the table's owner, which the
-- service issues only in migrations; short of that, no statement changes or removes an event.
CREATE FUNCTION audit_event_append_only() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.created_at < now() - interval '730 days' THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION 'audit_event is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege',
      HINT = 'Events are kept 730 days; only older ones may be deleted.';
END $$;--> statement-breakpoint
CREATE TRIGGER audit_event_append_only BEFORE UPDATE OR DELETE ON "audit_event"
  FOR EACH ROW EXECUTE FUNCTION audit_event_append_only();--> statement-breakpoint
CREATE TRIGGER audit_event_no_truncate BEFORE TRUNCATE ON "audit_event"
  FOR EACH STATEMENT EXECUTE FUNCTION audit_event_append_only();
