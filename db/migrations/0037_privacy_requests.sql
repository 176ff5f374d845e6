CREATE TABLE "privacy_request" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"source" text,
	"requested_by" text NOT NULL,
	"note" text,
	"person_hashes" text[] NOT NULL,
	"counts" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "opt_out_request" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"channel" text NOT NULL,
	"sealed_value" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"receipt_id" text
);
--> statement-breakpoint
CREATE INDEX "privacy_request_created_idx" ON "privacy_request" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "privacy_request_person_idx" ON "privacy_request" USING gin ("person_hashes");--> statement-breakpoint
CREATE INDEX "opt_out_request_expires_idx" ON "opt_out_request" USING btree ("expires_at");