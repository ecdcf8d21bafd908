// `npm start`: the service, as `proctor serve`.
import { runCli } from './cli.ts';

runCli(['serve']);
