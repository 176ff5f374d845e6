CREATE TABLE "suppression" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text,
	"kind" text NOT NULL,
	"value" text NOT NULL,
	"source" text NOT NULL,
	"note" text,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "suppressed_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "suppression" ADD CONSTRAINT "suppression_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "suppression_entry_idx" ON "suppression" USING btree (coalesce("account_id", ''),"kind","value");--> statement-breakpoint
CREATE INDEX "suppression_value_idx" ON "suppression" USING btree ("kind","value");