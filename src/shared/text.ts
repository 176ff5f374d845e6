/** The plural of an English noun or noun phrase: "records", "businesses", "cities". */
function pluralOf(unit: string): string {
  if (/(s|x|ch|sh)$/.test(unit)) return `${unit}es`;
  if (/[^aeiou]y$/.test(unit)) return `${unit.slice(0, -1)}ies`;
  return `${unit}s`;
}

/**
 * `n` with its unit, plural unless `n` is 1: "1 record", "3 records", "2
 * businesses"; `many` for a plural the rules miss ("inputs were").
 */
export function plural(n: number, unit: string, many = pluralOf(unit)): string {
  return `${n} ${n === 1 ? unit : many}`;
}
