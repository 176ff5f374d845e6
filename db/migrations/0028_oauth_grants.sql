CREATE TABLE "oauth_artifact" (
	"model" text NOT NULL,
	"id_hash" text NOT NULL,
	"payload" jsonb NOT NULL,
	"grant_id" text,
	"uid" text,
	"expires_at" timestamp with time zone,
	"consumed_at" timestamp with time zone,
	CONSTRAINT "oauth_artifact_model_id_hash_pk" PRIMARY KEY("model","id_hash")
);
--> statement-breakpoint
CREATE TABLE "oauth_grant" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"client_id" text NOT NULL,
	"client_name" text NOT NULL,
	"redirect_host" text NOT NULL,
	"toolsets" text[] NOT NULL,
	"read_only" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "oauth_grant" ADD CONSTRAINT "oauth_grant_account_id_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."account"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_grant" ADD CONSTRAINT "oauth_grant_user_id_app_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."app_user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oauth_artifact_grant_idx" ON "oauth_artifact" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "oauth_artifact_uid_idx" ON "oauth_artifact" USING btree ("uid");--> statement-breakpoint
CREATE INDEX "oauth_artifact_expires_idx" ON "oauth_artifact" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "oauth_grant_account_idx" ON "oauth_grant" USING btree ("account_id");