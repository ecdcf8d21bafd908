// `npm start`: the service, as `proctor serve`, run by node itself from the built server (so that
// npm's signal reaches the process that serves, and stops it).
import { runCli } from './cli.ts';

runCli(['serve']);
