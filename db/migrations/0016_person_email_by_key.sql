-- A person's email, lower case, is their natural key (person_key = coalesce(lower(email), ...)), so
-- its unique index finds people by email ("person_key = $1 and email is not null"); the index on
-- lower(email) only cost every load and every write.
DROP INDEX "person_email_idx";