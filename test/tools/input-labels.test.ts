import { getNamedType, isInputObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schema } from '../../schema/index.ts';
import { camel } from '../../schema/zod-input.ts';
import { MCP_TOOLS } from '../../src/mcp/tools.ts';
import { buildOpenApiDocument } from '../../src/rest/openapi.ts';
import { examplesOverride } from '../../src/shared/field-meta.ts';
import { TOOLS } from '../../src/tools/index.ts';

/**
 * Every input field of every tool declares a label and an example on its zod schema, once, and every
 * face shows them: OpenAPI's input schemas as `title` and `examples`, GraphQL's input field descriptions
 * starting with the label, the console's forms (test/faces/console/tool-form). MCP leaves them out for
 * its tool list's size budget; its descriptions carry an example each.
 */

interface Json {
  type?: string;
  title?: string;
  examples?: unknown[];
  description?: string;
  properties?: Record<string, Json>;
  items?: Json;
  $ref?: string;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const STARTABLE = TOOLS.filter((tool) => !tool.linkedOnly);

/** Each field of an object schema, nested objects' (and lists of objects') fields too, by path. */
function fieldsOf(json: Json, prefix = ''): [string, Json][] {
  return Object.entries(json.properties ?? {}).flatMap(([name, prop]) => {
    const inner = prop.type === 'array' && prop.items?.type === 'object' ? prop.items : prop;
    return [[`${prefix}${name}`, prop] as [string, Json], ...fieldsOf(inner, `${prefix}${name}.`)];
  });
}

const declared = (tool: (typeof TOOLS)[number]) =>
  z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any', override: examplesOverride }) as Json;

describe('tool input labels and examples', () => {
  it('are declared on every input field of every tool', () => {
    const missing = STARTABLE.flatMap((tool) =>
      fieldsOf(declared(tool))
        .filter(([, prop]) => !prop.title || !prop.examples?.length)
        .map(([path]) => `${tool.name}.${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('are in the OpenAPI request bodies as title and examples', () => {
    const doc = buildOpenApiDocument({ serverUrl: 'http://localhost' }) as unknown as {
      paths: Record<string, { post?: { requestBody?: { content: Record<string, { schema: Json }> } } }>;
      components: { schemas: Record<string, Json> };
    };
    const resolve = (s: Json): Json => (s.$ref ? resolve(doc.components.schemas[s.$ref.split('/').at(-1)!]!) : s);
    for (const tool of STARTABLE) {
      const body = resolve(doc.paths[tool.rest.path]!.post!.requestBody!.content['application/json']!.schema);
      for (const [name, prop] of fieldsOf(declared(tool)).filter(([path]) => !path.includes('.'))) {
        expect(body.properties?.[name]?.title, `${tool.name}.${name}`).toBe(prop.title);
        expect(body.properties?.[name]?.examples?.length, `${tool.name}.${name}`).toBeGreaterThan(0);
      }
    }
  });

  it('are left out of the MCP tools’ input schemas, whose descriptions say the same within the tool list’s budget', () => {
    for (const tool of STARTABLE) {
      const mcp = MCP_TOOLS.find((t) => t.name === tool.mcp.name)!;
      const props = (mcp.inputSchema as Json).properties ?? {};
      for (const [name, prop] of fieldsOf(declared(tool)).filter(([path]) => !path.includes('.'))) {
        expect(props[name]?.description, `${tool.mcp.name}.${name}`).toBeTruthy();
        expect(props[name]?.title, `${tool.mcp.name}.${name}`).toBeUndefined();
        expect(prop.title).toBeTruthy();
      }
    }
  });

  it('open the GraphQL input fields’ descriptions, nested input types too', () => {
    for (const tool of STARTABLE) {
      const check = (typeName: string, json: Json) => {
        const type = schema.getType(typeName);
        if (!isInputObjectType(type)) throw new Error(`${typeName} is not an input type`);
        for (const [name, prop] of Object.entries(json.properties ?? {})) {
          const field = type.getFields()[camel(name)]!;
          expect(field.description, `${typeName}.${field.name}`).toMatch(
            new RegExp(`^${escapeRegExp(prop.title!)}\\.`),
          );
          const named = getNamedType(field.type);
          const inner = prop.type === 'array' ? prop.items : prop;
          if (isInputObjectType(named) && inner) check(named.name, inner);
        }
      };
      check(tool.graphql.inputType, declared(tool));
    }
  });
});
