// The `proctor` bin runs as a program (`npx proctor`, node_modules/.bin/proctor): tsc writes it
// without the executable bit, and npm links bins before `prepare` builds them in a clone.
import fs from 'node:fs';

fs.chmodSync(new URL('../dist/bin.js', import.meta.url), 0o755);
