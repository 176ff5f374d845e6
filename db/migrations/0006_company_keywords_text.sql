-- A company's keywords as one text, for the trigram index that serves the keywords filter (whole
-- words, any of, case-insensitive). The separator is neither a word nor a space character, so a
-- whole-word match in this text lies inside one keyword and sits at the same word boundaries there.
-- array_to_string is only STABLE because it accepts any array type; over text[] it is immutable.
-- PL/pgSQL rather than SQL: an immutable SQL function over a stable one is never inlined, and the
-- SQL-function call costs about twice as much per row.
CREATE OR REPLACE FUNCTION company_keywords_text(keywords text[]) RETURNS text
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ BEGIN RETURN array_to_string(keywords, '|'); END $$;
