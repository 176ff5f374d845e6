import { isObjectType, type GraphQLSchema } from 'graphql';
import { guardEvents, LiveAccess } from '../src/http/access.ts';
import { createLoaders, type GraphQLContext } from './context.ts';

/**
 * Every subscription field, present and future, delivers its events only while the caller's access
 * lasts (src/http/access.ts): the source stream of each is wrapped once here, so an event is resolved
 * (its signed links minted) after the caller was checked, with the principal as that check found it.
 */
export function guardSubscriptions(schema: GraphQLSchema): GraphQLSchema {
  const type = schema.getSubscriptionType();
  if (!isObjectType(type)) return schema;
  for (const field of Object.values(type.getFields())) {
    const subscribe = field.subscribe;
    if (!subscribe) continue;
    field.subscribe = async (source, args, context: GraphQLContext, info) => {
      const access = accessOf(context);
      if (access?.endedBy) throw access.endedBy;
      const events = (await subscribe(source, args, context, info)) as AsyncIterable<unknown>;
      // A shared execution has no access of its own: its members are each checked by their socket.
      return access ? guardEvents(events, access) : events;
    };
  }
  return schema;
}

/**
 * The context's lasting access; for a subscription over HTTP, made
 * from its request's credential (checked on its own timer).
 */
function accessOf(context: GraphQLContext): LiveAccess | undefined {
  if (context.access || !context.credential) return context.access;
  const access = new LiveAccess(context.core, context.credential, context.principal, { selfCheck: true });
  Object.assign(context, {
    access,
    principal: access.principal,
    loaders: createLoaders(context.core, access.principal),
  });
  return access;
}
