CREATE TABLE "dataset_item" (
	"account_id" text NOT NULL,
	"dataset" text NOT NULL,
	"key" text NOT NULL,
	"run_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dataset_item_account_id_dataset_key_pk" PRIMARY KEY("account_id","dataset","key")
);
--> statement-breakpoint
CREATE TABLE "tool_cache" (
	"tool" text NOT NULL,
	"key" text NOT NULL,
	"period" text NOT NULL,
	"value" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tool_cache_tool_key_period_pk" PRIMARY KEY("tool","key","period")
);
--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "parent_run_id" text;--> statement-breakpoint
ALTER TABLE "dataset_item" ADD CONSTRAINT "dataset_item_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run" ADD CONSTRAINT "run_parent_run_id_run_id_fk" FOREIGN KEY ("parent_run_id") REFERENCES "public"."run"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "run_parent_idx" ON "run" USING btree ("parent_run_id") WHERE "run"."parent_run_id" is not null;