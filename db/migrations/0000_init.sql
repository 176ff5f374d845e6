CREATE TYPE "public"."ledger_kind" AS ENUM('purchase', 'plan_grant', 'hold', 'charge', 'release', 'refund');--> statement-breakpoint
CREATE TYPE "public"."plan" AS ENUM('starter', 'growth', 'scale');--> statement-breakpoint
CREATE TYPE "public"."subscription_status" AS ENUM('ACTIVE', 'TRIAL', 'CANCELLED');--> statement-breakpoint
CREATE TYPE "public"."run_status" AS ENUM('READY', 'RUNNING', 'SUCCEEDED', 'FAILED', 'ABORTING', 'ABORTED', 'TIMED-OUT');--> statement-breakpoint
CREATE TABLE "account" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"plan" "plan" DEFAULT 'starter' NOT NULL,
	"subscription_status" "subscription_status" DEFAULT 'ACTIVE' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_key" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_key_prefix_unique" UNIQUE("prefix"),
	CONSTRAINT "api_key_hash_unique" UNIQUE("hash")
);
--> statement-breakpoint
CREATE TABLE "ledger_entry" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "ledger_entry_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" text NOT NULL,
	"kind" "ledger_kind" NOT NULL,
	"plan_micros" bigint DEFAULT 0 NOT NULL,
	"purchased_micros" bigint DEFAULT 0 NOT NULL,
	"run_id" text,
	"note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallet" (
	"account_id" text PRIMARY KEY NOT NULL,
	"plan_micros" bigint DEFAULT 0 NOT NULL,
	"purchased_micros" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "run_item" (
	"run_id" text NOT NULL,
	"seq" integer NOT NULL,
	"data" json NOT NULL,
	CONSTRAINT "run_item_run_id_seq_pk" PRIMARY KEY("run_id","seq")
);
--> statement-breakpoint
CREATE TABLE "run" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"tool" text NOT NULL,
	"status" "run_status" NOT NULL,
	"status_message" text DEFAULT '' NOT NULL,
	"input" jsonb NOT NULL,
	"handled" integer DEFAULT 0 NOT NULL,
	"requested" integer DEFAULT 0 NOT NULL,
	"item_count" integer DEFAULT 0 NOT NULL,
	"file_name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"error_detail" text
);
--> statement-breakpoint
CREATE TABLE "local_business" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "local_business_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"place_id" text NOT NULL,
	"name" text NOT NULL,
	"category" text NOT NULL,
	"street" text,
	"city" text NOT NULL,
	"state" text,
	"postal_code" text,
	"country_code" text DEFAULT 'US' NOT NULL,
	"lat" double precision NOT NULL,
	"lng" double precision NOT NULL,
	"phone" text,
	"website" text,
	"emails" text[] DEFAULT '{}'::text[] NOT NULL,
	"rating" real,
	"review_count" integer DEFAULT 0 NOT NULL,
	"opening_hours" text[],
	"contact_name" text,
	"search_text" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', "local_business"."name" || ' ' || "local_business"."category")) STORED,
	CONSTRAINT "local_business_place_id_unique" UNIQUE("place_id")
);
--> statement-breakpoint
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entry" ADD CONSTRAINT "ledger_entry_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet" ADD CONSTRAINT "wallet_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_item" ADD CONSTRAINT "run_item_run_id_run_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."run"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run" ADD CONSTRAINT "run_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_key_account_idx" ON "api_key" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "ledger_account_idx" ON "ledger_entry" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "run_account_created_idx" ON "run" USING btree ("account_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "local_business_search_idx" ON "local_business" USING gin ("search_text");--> statement-breakpoint
CREATE INDEX "local_business_city_idx" ON "local_business" USING btree (lower("city"),"state");--> statement-breakpoint
CREATE INDEX "local_business_geo_idx" ON "local_business" USING btree ("lat","lng");