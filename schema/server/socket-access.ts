import type { WebSocket } from 'ws';
import { CloseCode } from 'graphql-ws';
import type { Core } from '../../src/core.ts';
import type { Logger } from '../../src/logger.ts';
import { AppError } from '../../src/shared/errors.ts';
import { sweepMs, type LiveAccess } from '../../src/http/access.ts';
import { credentialKey } from '../../src/http/pipeline.ts';
import type { Principal } from '../../src/accounts/accounts.ts';

/** A close reason: what the code means, then why (WebSocket close reasons are at most 123 bytes). */
export const closeReason = (meaning: string, message: string) => `${meaning}: ${message}`.slice(0, 120);

/**
 * The lasting access of every open graphql-ws socket of this process:
 * - each socket's access is checked again every `sweepMs` (half the key cache time, at least half a
 *   second), past the cache, one check per credential however many sockets share it; when it has ended (key revoked or
 *   expired, session signed out, member removed) the socket is closed with 4401 at once, though the client sends
 *   nothing;
 * - a key, and a client address, hold at most WS_MAX_SOCKETS_PER_KEY and WS_MAX_SOCKETS_PER_ADDRESS
 *   open sockets in this process (with `enforceLimits`); one more is closed with 4429.
 */
export function socketAccess(core: Pick<Core, 'config'>, log: Logger) {
  const open = new Map<WebSocket, LiveAccess>();
  const perKey = new Map<string, number>();
  const perAddress = new Map<string, number>();
  const count = (counts: Map<string, number>, key: string, by: number) => {
    const next = (counts.get(key) ?? 0) + by;
    if (next > 0) counts.set(key, next);
    else counts.delete(key);
  };

  async function sweep() {
    const byCredential = new Map<string, [LiveAccess, ...LiveAccess[]]>();
    for (const access of open.values()) {
      if (access.endedBy) continue;
      const key = credentialKey(access.credential);
      const group = byCredential.get(key);
      if (group) group.push(access);
      else byCredential.set(key, [access]);
    }
    await Promise.all(
      [...byCredential.values()].map(async ([first, ...others]) => {
        let result: Principal | AppError | undefined;
        try {
          // Past the authenticator's cache: the socket closes within the cache time of the change.
          result = await first.confirm(Date.now(), { fresh: true });
        } catch (err) {
          if (err instanceof AppError) result = err;
          else log.warn({ err }, 'could not check the access of open sockets');
        }
        for (const access of others) {
          if (result instanceof AppError) access.end(result);
          else if (result) access.accept(result);
        }
      }),
    );
  }
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping || open.size === 0) return;
    sweeping = true;
    void sweep().finally(() => (sweeping = false));
  }, sweepMs(core.config));
  timer.unref();

  return {
    /** Registers an admitted socket: closed with 4429 past a cap, with 4401 when its access ends. */
    open(socket: WebSocket, access: LiveAccess, address: string): LiveAccess {
      const { keyId } = access.principal;
      const { enforceLimits, wsMaxSocketsPerKey, wsMaxSocketsPerAddress } = core.config;
      if (enforceLimits && (perKey.get(keyId) ?? 0) >= wsMaxSocketsPerKey) {
        const whose = access.principal.sessionId ? 'console session' : 'API key';
        throw new AppError(
          429,
          'rate_limited',
          `Too many open sockets: this ${whose} has ${wsMaxSocketsPerKey} open; close one before opening another`,
        );
      }
      if (enforceLimits && (perAddress.get(address) ?? 0) >= wsMaxSocketsPerAddress) {
        throw new AppError(
          429,
          'rate_limited',
          `Too many open sockets from your address: ${wsMaxSocketsPerAddress} are open; ` +
            'close one before opening another',
        );
      }
      open.set(socket, access);
      count(perKey, keyId, 1);
      count(perAddress, address, 1);
      const ended = access.onEnd((refusal) =>
        socket.close(CloseCode.Unauthorized, closeReason('Unauthorized', refusal.message)),
      );
      socket.once('close', () => {
        ended();
        open.delete(socket);
        count(perKey, keyId, -1);
        count(perAddress, address, -1);
      });
      return access;
    },
    stop: () => clearInterval(timer),
  };
}
