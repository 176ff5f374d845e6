// @ts-check
import { isEnumType } from 'graphql';

/**
 * A graphql-codegen plugin: every enum of the schema as `export const <Enum>Descriptions = { VALUE:
 * 'its description' }`, one export an enum so the bundle keeps only those the console reads. The
 * console's words for enum values (console/src/lib/format.ts) are derived from them.
 * @param {import('graphql').GraphQLSchema} schema
 */
export const plugin = (schema) => {
  const types = Object.values(schema.getTypeMap())
    .filter((type) => isEnumType(type) && !type.name.startsWith('__'))
    .sort((a, b) => a.name.localeCompare(b.name));
  const lines = ['/* Generated from the schema by console/codegen-enum-descriptions.mjs; do not edit. */'];
  for (const type of types) {
    if (!isEnumType(type)) continue;
    const entries = type.getValues().map((v) => `  ${v.name}: ${JSON.stringify(v.description ?? '')},`);
    lines.push(`export const ${type.name}Descriptions = {`, ...entries, '} as const;');
  }
  return `${lines.join('\n')}\n`;
};
