import { NativeSelect, NumberInput, Textarea, TextInput } from '@mantine/core';
import { graphql } from './gql/index.ts';
import type { ToolInputFieldsFragment } from './gql/graphql.ts';

/**
 * A tool's input as a form: one control a field of its start input type (the `inputFields` of the
 * `tool` and `tools` queries), and the form's values as the input object its start takes. The tool
 * form, a pipeline's steps and a run's next step build their fields with it.
 */

// The fields of a tool's input a form reads, spread in the documents that ask for a tool.
graphql(`
  fragment ToolInputFields on ToolInputField {
    name
    description
    type
    kind
    required
    options
  }
`);

export type Field = ToolInputFieldsFragment;
export type Values = Record<string, string>;

export interface UserErrorLike {
  code?: string;
  field?: readonly string[] | null;
  message: string;
}

const isList = (kind: string) => kind.endsWith('_LIST');

/** A value of the form the input cannot take, at its field. */
export class FormError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Every field empty: the form as it opens. */
export const emptyValues = (fields: readonly Field[]): Values => Object.fromEntries(fields.map((f) => [f.name, '']));

/** The form's values as the input object (empty fields left out, so the tool's defaults apply). */
export function inputOf(fields: readonly Field[], values: Values): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = (values[field.name] ?? '').trim();
    if (raw === '') continue;
    switch (field.kind) {
      case 'INT':
      case 'FLOAT': {
        const n = Number(raw);
        if (!Number.isFinite(n) || (field.kind === 'INT' && !Number.isInteger(n)))
          throw new FormError(field.name, field.kind === 'INT' ? 'Enter a whole number.' : 'Enter a number.');
        input[field.name] = n;
        break;
      }
      case 'BOOLEAN':
        input[field.name] = raw === 'true';
        break;
      case 'TEXT_LIST':
      case 'ENUM_LIST':
        input[field.name] = raw
          .split('\n')
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case 'OBJECT':
      case 'OBJECT_LIST':
        try {
          input[field.name] = JSON.parse(raw);
        } catch {
          throw new FormError(field.name, 'Enter JSON.');
        }
        break;
      default:
        input[field.name] = raw;
    }
  }
  return input;
}

/**
 * userErrors by the input field they name: the field after `prefix` in their path (`["input",
 * "maxItems"]` → maxItems with the prefix `["input"]`); the rest apart.
 */
export function byField(errors: readonly UserErrorLike[], prefix: readonly string[] = ['input']) {
  const fields: Record<string, string> = {};
  const other: string[] = [];
  for (const e of errors) {
    const path = e.field ?? [];
    const name = prefix.every((p, i) => path[i] === p) ? path[prefix.length] : undefined;
    if (name) fields[name] = fields[name] ? `${fields[name]} ${e.message}` : e.message;
    else other.push(e.message);
  }
  return { fields, other };
}

export function FieldInput({
  field,
  value,
  error,
  onChange,
}: {
  field: Field;
  value: string;
  error?: string;
  onChange(value: string): void;
}) {
  const common = {
    label: field.name,
    description: field.description ?? undefined,
    required: field.required,
    error,
    name: field.name,
  };
  switch (field.kind) {
    case 'INT':
    case 'FLOAT':
      return (
        <NumberInput
          {...common}
          value={value}
          allowDecimal={field.kind === 'FLOAT'}
          onChange={(v) => onChange(String(v))}
        />
      );
    case 'BOOLEAN':
      return (
        <NativeSelect
          {...common}
          value={value}
          onChange={(e) => onChange(e.currentTarget.value)}
          data={[
            { value: '', label: 'Default' },
            { value: 'true', label: 'Yes' },
            { value: 'false', label: 'No' },
          ]}
        />
      );
    case 'ENUM':
      return (
        <NativeSelect
          {...common}
          value={value}
          onChange={(e) => onChange(e.currentTarget.value)}
          data={[{ value: '', label: 'Default' }, ...field.options]}
        />
      );
    case 'TEXT_LIST':
    case 'ENUM_LIST':
    case 'OBJECT':
    case 'OBJECT_LIST':
      return (
        <Textarea
          {...common}
          description={`${field.description ?? ''} ${isList(field.kind) && !field.kind.startsWith('OBJECT') ? '(one per line)' : '(JSON)'}`.trim()}
          autosize
          minRows={2}
          value={value}
          onChange={(e) => onChange(e.currentTarget.value)}
        />
      );
    default:
      return <TextInput {...common} value={value} onChange={(e) => onChange(e.currentTarget.value)} />;
  }
}
