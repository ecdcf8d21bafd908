// `proctor serve` (and `npm start`): the service, until SIGTERM or SIGINT.
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { startServer } from '../server.ts';

export async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, logger);
  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await server.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
