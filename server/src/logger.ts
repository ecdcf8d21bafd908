import { pino, type Logger } from 'pino';

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'proctor' },
      // Defence in depth: nothing logs headers, but a stray object must not leak a key either.
      redact: { paths: ['authorization', '*.authorization', 'headers.authorization', 'apiKey', '*.apiKey', 'key', '*.key'], censor: '[redacted]' },
    },
    destination ?? process.stdout,
  );
}
