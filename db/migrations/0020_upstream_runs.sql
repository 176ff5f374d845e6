ALTER TABLE "run" ADD COLUMN "upstream_run_id" text;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "upstream_actor_id" text;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "upstream_dataset_id" text;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "upstream_offset" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "upstream_cost_micros" bigint DEFAULT 0 NOT NULL;