ALTER TABLE "account" ADD COLUMN "permissible_use_acknowledged_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "account" ADD COLUMN "permissible_use_acknowledged_by" text;