import { Fieldset, NativeSelect, NumberInput, SimpleGrid, Text, Textarea, TextInput } from '@mantine/core';
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
    label
    description
    example
    type
    kind
    required
    options
    fields {
      name
      label
      description
      example
      type
      kind
      required
      options
    }
  }
`);

export type Field = ToolInputFieldsFragment;
type SubField = Field['fields'][number];
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

/** An object field edited field by field: its value in the form is the record of its sub-fields' texts. */
const isObjectForm = (field: Field) => field.kind === 'OBJECT' && field.fields.length > 0;

/** The texts of an object field's sub-fields, by name. */
export const subValues = (value: string): Record<string, string> => {
  try {
    const parsed = JSON.parse(value || '{}') as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
};

const numberOf = (field: { name: string; kind: string }, raw: string, at: string) => {
  const n = Number(raw);
  if (!Number.isFinite(n) || (field.kind === 'INT' && !Number.isInteger(n)))
    throw new FormError(at, field.kind === 'INT' ? 'Enter a whole number.' : 'Enter a number.');
  return n;
};

/** An object field's sub-fields as its input object; undefined when all are empty. */
function objectOf(field: Field, value: string): Record<string, unknown> | undefined {
  const texts = subValues(value);
  const given = field.fields.filter((f) => (texts[f.name] ?? '').trim() !== '');
  if (given.length === 0) return undefined;
  const missing = field.fields.filter((f) => f.required && !given.includes(f));
  if (missing.length > 0)
    throw new FormError(field.name, `Also enter ${missing.map((f) => f.label.toLowerCase()).join(', ')}.`);
  return Object.fromEntries(
    given.map((f: SubField) => {
      const raw = (texts[f.name] ?? '').trim();
      return [f.name, f.kind === 'INT' || f.kind === 'FLOAT' ? numberOf(f, raw, field.name) : raw];
    }),
  );
}

/**
 * The form's values as the input object (empty fields left out, so the tool's defaults apply). A
 * required field left empty is refused at it, in words, before anything is sent.
 */
export function inputOf(fields: readonly Field[], values: Values): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of fields) {
    if (isObjectForm(field)) {
      const object = objectOf(field, values[field.name] ?? '');
      if (object) input[field.name] = object;
      else if (field.required) throw new FormError(field.name, `Enter the ${field.label.toLowerCase()}.`);
      continue;
    }
    const raw = (values[field.name] ?? '').trim();
    if (raw === '') {
      if (field.required) throw new FormError(field.name, `Enter the ${field.label.toLowerCase()}.`);
      continue;
    }
    switch (field.kind) {
      case 'INT':
      case 'FLOAT': {
        input[field.name] = numberOf(field, raw, field.name);
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

/** A list's example as the placeholder of its one-per-line text: one item a line. */
const placeholderOf = (field: { kind: string; example?: string | null }) => {
  if (!field.example) return undefined;
  if (!isList(field.kind) || field.kind.startsWith('OBJECT')) return field.example;
  try {
    const items = JSON.parse(field.example) as unknown;
    return Array.isArray(items) ? items.map(String).join('\n') : field.example;
  } catch {
    return field.example;
  }
};

/** A field's example in words, beside its help (a placeholder vanishes once the user types). */
const withExample = (field: { description?: string | null; example?: string | null; kind: string }) => {
  const example = placeholderOf(field);
  const help = field.description ?? '';
  if (!example || field.kind === 'BOOLEAN') return help || undefined;
  return `${help} Example: ${example.replace(/\n/g, ', ')}`.trim();
};

/** An input object edited field by field (a map area's four corners), with the refusal at the object shown under it. */
function ObjectInput({
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
  const texts = subValues(value);
  const errorId = `${field.name}-error`;
  return (
    <Fieldset legend={field.label} aria-describedby={error ? errorId : undefined}>
      {field.description && (
        <Text size="sm" c="dimmed" mb="xs">
          {field.description}
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        {field.fields.map((sub) => (
          <FieldInput
            key={sub.name}
            field={{ ...sub, fields: [] }}
            value={texts[sub.name] ?? ''}
            onChange={(v) => onChange(JSON.stringify({ ...texts, [sub.name]: v }))}
            required={false}
          />
        ))}
      </SimpleGrid>
      {error && (
        <Text id={errorId} c="red.9" size="sm" mt="xs">
          {error}
        </Text>
      )}
    </Fieldset>
  );
}

export function FieldInput({
  field,
  value,
  error,
  onChange,
  required,
}: {
  field: Field;
  value: string;
  error?: string;
  onChange(value: string): void;
  /** Whether the control is marked required; default: the field's own `required`. */
  required?: boolean;
}) {
  if (isObjectForm(field)) return <ObjectInput field={field} value={value} error={error} onChange={onChange} />;
  const common = {
    label: field.label,
    description: withExample(field),
    placeholder: field.kind === 'BOOLEAN' || field.kind === 'ENUM' ? undefined : placeholderOf(field),
    required: required ?? field.required,
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
          description={`${common.description ?? ''} ${isList(field.kind) && !field.kind.startsWith('OBJECT') ? '(one per line)' : '(JSON)'}`.trim()}
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
