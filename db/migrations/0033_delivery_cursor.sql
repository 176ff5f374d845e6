ALTER TABLE "delivery" ADD COLUMN "cursor" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "delivery" ADD COLUMN "resume_at" timestamp with time zone;