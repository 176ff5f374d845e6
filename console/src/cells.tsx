import { Table } from '@mantine/core';
import { cellText, isNestedList, type Item, nestedTable } from './lib/cell-text.ts';

/**
 * Table cells for values that are not one piece of text: a list of objects (the contacts the email and
 * domain finders return for a company, a property's schools, a business's reviews) is shown as rows of
 * a small nested table, one line per item and one column per field, never as JSON; a list of scalars
 * is joined; yes/no for booleans (lib/cell-text.ts reads them, `cellText` as plain text for a title or a CSV).
 */

/**
 * A list of objects as a small table: one row per item, one column per field (headed in words, or by
 * `headers`). `label` names it for screen readers (“Contacts of acme.com”).
 */
export function NestedRows({
  items,
  label,
  headers = {},
}: {
  items: readonly Item[];
  label: string;
  headers?: Readonly<Record<string, string>>;
}) {
  return (
    <Table
      aria-label={label}
      withRowBorders
      verticalSpacing={2}
      horizontalSpacing="xs"
      fz="xs"
      data={nestedTable(items, headers)}
    />
  );
}

/**
 * One table cell of any value: a list of objects as NestedRows (labelled `label`), anything else as
 * its text (`cellText`), an empty value as nothing.
 */
export function Cell({
  value,
  label,
  headers,
}: {
  value: unknown;
  label: string;
  headers?: Readonly<Record<string, string>>;
}) {
  if (isNestedList(value)) return <NestedRows items={value} label={label} headers={headers} />;
  const text = cellText(value);
  return text ? <span title={text}>{text}</span> : null;
}
