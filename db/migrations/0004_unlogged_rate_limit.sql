-- Rate-limit counters are disposable: no WAL, no crash safety needed.
ALTER TABLE "rate_limit" SET UNLOGGED;
