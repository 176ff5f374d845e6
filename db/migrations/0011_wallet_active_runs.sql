ALTER TABLE "wallet" ADD COLUMN "active_runs" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "wallet" w SET "active_runs" = (SELECT count(*) FROM "run" r WHERE r."account_id" = w."account_id" AND r."status" IN ('RUNNING', 'ABORTING'));
