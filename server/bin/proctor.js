#!/usr/bin/env node
// The `proctor` command as npm links it (`npx proctor`, node_modules/.bin/proctor). This file is in
// the repository, not built: npm links a package's command at install only when its file exists,
// and in a clone `npm ci` links before `prepare` builds dist/. It runs the built command.
try {
  await import('../dist/bin.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/bin.js')) throw error;
  process.stderr.write('proctor: the server is not built: run `npm run --silent build --workspaces` (npm ci runs it)\n');
  process.exit(1);
}
