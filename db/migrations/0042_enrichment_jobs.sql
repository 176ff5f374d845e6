CREATE TABLE "enrichment_job" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"created_by" text,
	"kind" text NOT NULL,
	"file_name" text NOT NULL,
	"total" integer NOT NULL,
	"matched" integer NOT NULL,
	"not_found" integer NOT NULL,
	"skipped" integer NOT NULL,
	"rows" json,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"purged_at" timestamp with time zone,
	CONSTRAINT "enrichment_job_kind_known" CHECK ("enrichment_job"."kind" in ('leads', 'local_businesses'))
);
--> statement-breakpoint
ALTER TABLE "enrichment_job" ADD CONSTRAINT "enrichment_job_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enrichment_job" ADD CONSTRAINT "enrichment_job_created_by_app_user_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."app_user"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "enrichment_job_account_created_idx" ON "enrichment_job" USING btree ("account_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "enrichment_job_expires_idx" ON "enrichment_job" USING btree ("expires_at") WHERE "enrichment_job"."purged_at" is null;