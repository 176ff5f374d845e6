/**
 * `name` as a quoted SQL identifier (a table, column, database or LISTEN
 * channel), its quotes doubled: safe in any statement text.
 */
export const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;
