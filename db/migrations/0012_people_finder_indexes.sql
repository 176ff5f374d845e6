CREATE INDEX "person_name_idx" ON "person" USING btree (lower("last_name"),lower("first_name"));--> statement-breakpoint
CREATE INDEX "property_owner_name_prefix_idx" ON "property" USING btree (lower("owner_name") text_pattern_ops);--> statement-breakpoint
CREATE INDEX "property_owner_name_idx" ON "property" USING btree ("owner_name");--> statement-breakpoint
CREATE INDEX "property_owner_mailing_idx" ON "property" USING btree (lower("owner_mailing_address"));