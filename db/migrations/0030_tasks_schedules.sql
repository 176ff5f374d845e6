CREATE TABLE "saved_task" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"tool" text NOT NULL,
	"input" jsonb NOT NULL,
	"dataset_name" text,
	"only_new" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "schedule_fire" (
	"schedule_id" text NOT NULL,
	"tick" timestamp with time zone NOT NULL,
	"outcome" text,
	"reason" text,
	"run_id" text,
	"fired_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "schedule_fire_schedule_id_tick_pk" PRIMARY KEY("schedule_id","tick")
);
--> statement-breakpoint
CREATE TABLE "schedule" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"task_id" text NOT NULL,
	"cron" text NOT NULL,
	"timezone" text NOT NULL,
	"exclusive" boolean DEFAULT true NOT NULL,
	"next_fire_at" timestamp with time zone,
	"last_fired_at" timestamp with time zone,
	"last_run_id" text,
	"paused_at" timestamp with time zone,
	"paused_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "task_id" text;--> statement-breakpoint
ALTER TABLE "run" ADD COLUMN "schedule_id" text;--> statement-breakpoint
ALTER TABLE "saved_task" ADD CONSTRAINT "saved_task_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedule_fire" ADD CONSTRAINT "schedule_fire_schedule_id_schedule_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedule"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedule" ADD CONSTRAINT "schedule_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedule" ADD CONSTRAINT "schedule_task_id_saved_task_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."saved_task"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "saved_task_name_idx" ON "saved_task" USING btree ("account_id","name");--> statement-breakpoint
CREATE INDEX "schedule_due_idx" ON "schedule" USING btree ("next_fire_at");