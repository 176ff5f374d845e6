/** How the catalog's GraphQL types read a record: REST's snake_case row, field by field. */

export type Rec = Record<string, unknown>;
export const str = (k: string) => (r: Rec) => (r[k] ?? null) as string | null;
export const num = (k: string) => (r: Rec) => (r[k] ?? null) as number | null;
export const list = (k: string) => (r: Rec) => (r[k] ?? []) as string[];
