-- Trigram indexes serve the partial-match filters (titles, names, domains, cities).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
