CREATE TABLE "card_payment" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"original_micros" bigint NOT NULL,
	"paid_micros" bigint NOT NULL,
	"plan" "plan" NOT NULL,
	"bonus_micros" bigint NOT NULL,
	"status" text NOT NULL,
	"credited_at" timestamp with time zone,
	"reversed_micros" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stripe_event" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"event" jsonb NOT NULL,
	"processed_at" timestamp with time zone,
	"outcome" text
);
--> statement-breakpoint
ALTER TABLE "account" ADD COLUMN "stripe_customer_id" text;--> statement-breakpoint
ALTER TABLE "account" ADD COLUMN "stripe_subscription_id" text;--> statement-breakpoint
ALTER TABLE "account" ADD COLUMN "stripe_subscription_status" text;--> statement-breakpoint
ALTER TABLE "ledger_entry" ADD COLUMN "payment_ref" text;--> statement-breakpoint
ALTER TABLE "card_payment" ADD CONSTRAINT "card_payment_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "card_payment_account_idx" ON "card_payment" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "stripe_event_unprocessed_idx" ON "stripe_event" USING btree ("received_at") WHERE "stripe_event"."processed_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_payment_once_idx" ON "ledger_entry" USING btree ("kind","payment_ref") WHERE "ledger_entry"."payment_ref" is not null and "ledger_entry"."kind" in ('purchase', 'plan_grant');--> statement-breakpoint
ALTER TABLE "account" ADD CONSTRAINT "account_stripe_customer_id_unique" UNIQUE("stripe_customer_id");