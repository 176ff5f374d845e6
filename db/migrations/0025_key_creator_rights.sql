-- Why a key stopped working: revoked by hand ('revoked') or because its creator left the account ('creator_removed').
ALTER TABLE "api_key" ADD COLUMN "revoked_reason" text;--> statement-breakpoint
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_revoked_reason_known" CHECK ("api_key"."revoked_reason" in ('revoked', 'creator_removed'));--> statement-breakpoint
UPDATE "api_key" SET "revoked_reason" = 'revoked' WHERE "revoked_at" IS NOT NULL;--> statement-breakpoint
-- A key acts with its creator's rights from now on: keys whose creator has already left their account stop working.
UPDATE "api_key" SET "revoked_at" = now(), "revoked_reason" = 'creator_removed'
WHERE "revoked_at" IS NULL
  AND "created_by" IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM "membership" m WHERE m."account_id" = "api_key"."account_id" AND m."user_id" = "api_key"."created_by");
