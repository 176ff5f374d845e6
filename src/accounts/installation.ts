import { randomBytes } from 'node:crypto';
import type { Executor } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { installationSecretTable } from '../../db/tables/identity.ts';

/** Read once per process: the secret never changes once made. */
const cached = new WeakMap<object, Promise<Buffer>>();

/**
 * The installation's random 32-byte secret (signed links), made on first use and shared by every
 * process of the installation: the first to ask inserts it, the others read that row.
 */
export function getInstallationSecret(db: Executor): Promise<Buffer> {
  let secret = cached.get(db);
  if (!secret) {
    secret = (async () => {
      await db
        .insert(installationSecretTable)
        .values({ id: 1, secret: randomBytes(32) })
        .onConflictDoNothing();
      const rows = await db.select({ secret: installationSecretTable.secret }).from(installationSecretTable);
      return Buffer.from(oneRow(rows, 'the installation secret').secret);
    })();
    secret.catch(() => cached.delete(db));
    cached.set(db, secret);
  }
  return secret;
}
