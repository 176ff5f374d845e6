/**
 * Where a provider sends the user back at the end of its OAuth authorization-code flow
 * (`/connections/callback?code&state`): the connection is made (src/destinations/connections.ts) and
 * the browser goes on to the console's Connections page, which says what happened in words.
 */
import type { FastifyInstance } from 'fastify';
import type { Core } from '../core.ts';
import { finishConnect } from '../destinations/connections.ts';

export async function connectionRoutes(app: FastifyInstance, { core }: { core: Core }) {
  app.get<{ Querystring: { state?: string; code?: string; error?: string } }>(
    '/connections/callback',
    async (request, reply) => {
      const query = request.query ?? {};
      const pick = (value: unknown) => (typeof value === 'string' ? value : undefined);
      const done = await finishConnect(core, {
        state: pick(query.state),
        code: pick(query.code),
        error: pick(query.error),
      });
      const to = new URLSearchParams(
        done.connection ? { connected: done.connection.id } : { refused: done.refused ?? 'The sign-in failed.' },
      );
      return reply.redirect(`/connections?${to.toString()}`, 303);
    },
  );
}
