CREATE TABLE "account_dataset" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"tool" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dataset_item" ADD COLUMN "seq" integer;--> statement-breakpoint
ALTER TABLE "dataset_item" ADD COLUMN "delivered_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "dataset_name" text;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "only_new" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "skipped_delivered" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "account_dataset" ADD CONSTRAINT "account_dataset_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "account_dataset_name_idx" ON "account_dataset" USING btree ("account_id","name");--> statement-breakpoint
CREATE INDEX "dataset_item_rows_idx" ON "dataset_item" USING btree ("account_id","dataset","delivered_at","run_id","seq");--> statement-breakpoint
CREATE INDEX "dataset_item_run_idx" ON "dataset_item" USING btree ("run_id");--> statement-breakpoint
-- The business-for-sale datasets named before datasets were resources: one each, its identities kept.
INSERT INTO "account_dataset" ("id", "account_id", "name", "tool")
SELECT 'ds_' || substr(md5("account_id" || '/' || "dataset"), 1, 22), "account_id", "dataset", 'business-for-sale'
FROM (SELECT DISTINCT "account_id", "dataset" FROM "dataset_item") AS named
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- Identities are compared trimmed and lowercased (src/datasets identityOf).
UPDATE "dataset_item" AS d SET "key" = lower(btrim(d."key"))
WHERE d."key" <> lower(btrim(d."key")) AND NOT EXISTS (
  SELECT 1 FROM "dataset_item" AS o
  WHERE o."account_id" = d."account_id" AND o."dataset" = d."dataset" AND o."key" = lower(btrim(d."key")));
