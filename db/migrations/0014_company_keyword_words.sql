-- The words of a company's keywords, lower case, split wherever the regex engine's word characters
-- end: exactly the words a whole-word regex can match, so "keywords any-of" over plain words
-- is an indexed array overlap, and for other searches the words are a necessary condition checked
-- before the regex. PL/pgSQL for the same reason as company_keywords_text (migration 0006).
CREATE OR REPLACE FUNCTION company_keyword_words(keywords text[]) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ BEGIN RETURN array_remove(regexp_split_to_array(lower(array_to_string(keywords, ' ')), '\W+'), ''); END $$;--> statement-breakpoint
ALTER TABLE "company" ADD COLUMN "keyword_words" text[] GENERATED ALWAYS AS (company_keyword_words("company"."keywords")) STORED;--> statement-breakpoint
CREATE INDEX "company_keyword_words_idx" ON "company" USING gin ("keyword_words");
