CREATE TABLE "delivered_lead" (
	"account_id" text NOT NULL,
	"person_id" bigint NOT NULL,
	"delivered_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "delivered_lead_account_id_person_id_pk" PRIMARY KEY("account_id","person_id")
);
--> statement-breakpoint
ALTER TABLE "delivered_lead" ADD CONSTRAINT "delivered_lead_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivered_lead" ADD CONSTRAINT "delivered_lead_person_id_person_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."person"("id") ON DELETE cascade ON UPDATE no action;