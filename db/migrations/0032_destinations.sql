CREATE TABLE "connect_attempt" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"provider" text NOT NULL,
	"name" text NOT NULL,
	"user_id" text,
	"code_verifier" text,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "provider_connection" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"provider" text NOT NULL,
	"method" text NOT NULL,
	"name" text NOT NULL,
	"external_id" text,
	"external_name" text,
	"scopes" text,
	"instance_url" text,
	"access_token" text NOT NULL,
	"refresh_token" text,
	"access_expires_at" timestamp with time zone,
	"status" text DEFAULT 'active' NOT NULL,
	"broken_reason" text,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"refreshed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "delivery_problem" (
	"delivery_id" text NOT NULL,
	"row" integer NOT NULL,
	"outcome" text NOT NULL,
	"reason" text NOT NULL,
	CONSTRAINT "delivery_problem_delivery_id_row_pk" PRIMARY KEY("delivery_id","row")
);
--> statement-breakpoint
CREATE TABLE "delivery" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"destination_id" text NOT NULL,
	"run_id" text,
	"pipeline_id" text,
	"status" text DEFAULT 'queued' NOT NULL,
	"message" text DEFAULT '' NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"next_offset" integer DEFAULT 0 NOT NULL,
	"sent" integer DEFAULT 0 NOT NULL,
	"created" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "destination" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"connection_id" text NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"mapping" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"paused_at" timestamp with time zone,
	"paused_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "destination_ids" text[];--> statement-breakpoint
ALTER TABLE "pipeline" ADD COLUMN "destination_ids" text[];--> statement-breakpoint
ALTER TABLE "saved_task" ADD COLUMN "destination_ids" text[];--> statement-breakpoint
ALTER TABLE "connect_attempt" ADD CONSTRAINT "connect_attempt_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_connection" ADD CONSTRAINT "provider_connection_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivery_problem" ADD CONSTRAINT "delivery_problem_delivery_id_delivery_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."delivery"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivery" ADD CONSTRAINT "delivery_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivery" ADD CONSTRAINT "delivery_destination_id_destination_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."destination"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "destination" ADD CONSTRAINT "destination_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "destination" ADD CONSTRAINT "destination_connection_id_provider_connection_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."provider_connection"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "provider_connection_account_idx" ON "provider_connection" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "delivery_account_idx" ON "delivery" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "delivery_run_idx" ON "delivery" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "destination_account_idx" ON "destination" USING btree ("account_id","created_at");