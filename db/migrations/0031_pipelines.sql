CREATE TABLE "pipeline" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"status" text NOT NULL,
	"status_message" text DEFAULT '' NOT NULL,
	"stopped_reason" text,
	"steps" jsonb NOT NULL,
	"step" integer DEFAULT 0 NOT NULL,
	"quoted_micros" jsonb NOT NULL,
	"held_micros" bigint DEFAULT 0 NOT NULL,
	"hold_plan_micros" bigint DEFAULT 0 NOT NULL,
	"hold_purchased_micros" bigint DEFAULT 0 NOT NULL,
	"dataset_name" text,
	"only_new" boolean DEFAULT false NOT NULL,
	"task_id" text,
	"schedule_id" text,
	"webhook_url" text,
	"webhook_secret" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "ledger_entry" ADD COLUMN "pipeline_id" text;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "pipeline_id" text;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "pipeline_step" integer;--> statement-breakpoint
ALTER TABLE "saved_task" ADD COLUMN "steps" jsonb;--> statement-breakpoint
ALTER TABLE "pipeline" ADD CONSTRAINT "pipeline_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pipeline_account_created_idx" ON "pipeline" USING btree ("account_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "run_pipeline_idx" ON "run" USING btree ("pipeline_id","pipeline_step") WHERE "run"."pipeline_id" is not null;