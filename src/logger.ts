import pino from 'pino';

export type Logger = pino.Logger;

/** Application logger; credentials are redacted wherever they appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', 'apiKey', 'connectionParams.authorization'],
      censor: '[redacted]',
    },
  });
}
