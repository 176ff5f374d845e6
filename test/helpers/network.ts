import type { NetworkConfig } from '../../src/config.ts';
import {
  localNetwork,
  startDns,
  startSmtp,
  startWeb,
  type LocalDns,
  type LocalSmtp,
  type LocalWeb,
  type MailboxMode,
  type Sites,
  type Zone,
} from '../fixtures/net.ts';
import { startTestApp, type TestApp } from './app.ts';

/** What the local servers answer. They read these maps on every request, so a test may fill them after start. */
export interface LocalWorld {
  zone: Zone;
  mailboxes: Record<string, MailboxMode>;
  /** Served by a local web server; without sites none is started. */
  sites?: Sites;
}

/** A test app whose outside world is the local servers; `stop()` stops the app, then the servers. */
export interface NetworkedTestApp<Web extends LocalWeb | undefined = LocalWeb | undefined> extends TestApp {
  dns: LocalDns;
  smtp: LocalSmtp;
  web: Web;
}

/**
 * The whole gateway (as `startTestApp`) on a local network: a DNS server, a scripted SMTP server and,
 * given sites, a web server, with settings (`localNetwork`) that admit only them; `network` overrides those settings.
 */
export function startNetworkedTestApp(
  world: LocalWorld & { sites: Sites },
  network?: Partial<NetworkConfig>,
): Promise<NetworkedTestApp<LocalWeb>>;
export function startNetworkedTestApp(world: LocalWorld, network?: Partial<NetworkConfig>): Promise<NetworkedTestApp>;
export async function startNetworkedTestApp(
  world: LocalWorld,
  network: Partial<NetworkConfig> = {},
): Promise<NetworkedTestApp> {
  const running: { close(): Promise<void> }[] = [];
  const closeAll = async () => {
    for (const part of running.splice(0).reverse()) await part.close();
  };
  try {
    const dns = await startDns(world.zone);
    running.push(dns);
    const smtp = await startSmtp(world.mailboxes);
    running.push(smtp);
    const web = world.sites && (await startWeb(world.sites));
    if (web) running.push(web);
    const t = await startTestApp({
      config: { network: localNetwork({ dns: dns.port, smtp: smtp.port, web: web?.port }, network) },
    });
    running.push({ close: () => t.stop() });
    return { ...t, dns, smtp, web, stop: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
