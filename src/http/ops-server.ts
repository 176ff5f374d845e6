import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { Core } from '../core.ts';
import { RequestLogger, type Logger } from '../logger.ts';
import { installErrorHandling } from './errors.ts';
import { installHeaders, requestId } from './headers.ts';
import { installMetrics } from './metrics.ts';
import { installReadiness, type WorkerState } from './readiness.ts';

export interface OpsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * What a standalone worker process (`leadgate worker` with METRICS_PORT) serves for operators, on its
 * own port: `GET /metrics` (its own registry: its jobs, the runs it ended, its webhook deliveries),
 * `GET /ready` (database, migrations, its heartbeat) and `GET /health`, with the gateway's headers,
 * METRICS_TOKEN and error bodies.
 */
export async function startOpsServer(
  core: Core,
  worker: WorkerState,
  port: number,
  host = core.config.host,
): Promise<OpsServer> {
  const http = Fastify({
    loggerInstance: core.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestId,
    requestIdHeader: false,
    childLoggerFactory: (parent, bindings) =>
      new RequestLogger(parent as Logger, bindings) as unknown as FastifyBaseLogger,
  });
  await installHeaders(http, { publicUrl: core.config.publicUrl, pages: [] });
  installMetrics(http, { token: core.config.metricsToken, sql: core.sql });
  installErrorHandling(http);
  http.get('/health', async () => ({ status: 'ok' }));
  installReadiness(http, { sql: core.sql, livenessSecs: core.config.workerLivenessSecs, worker: () => worker });
  await http.listen({ port, host });
  const { port: bound } = http.server.address() as AddressInfo;
  const url = `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${bound}`;
  core.logger.info({ url }, 'worker metrics and readiness served');
  return { url, close: () => http.close() };
}
