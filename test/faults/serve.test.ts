import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.ts';
import { freePort, type ServedNode, serveNode, spawnProctor } from '../helpers/process.ts';

it('when the port is already in use, then serve stops with one line naming the port and PORT, before it touches the data directory', async () => {
  const port = await freePort();
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-port-')), 'data');
  try {
    const server = spawnProctor(['serve'], { PORT: String(port), HOST: '127.0.0.1', PROCTOR_DATA_DIR: dataDir, DATABASE_URL: '', PROCTOR_DEMO: 'false' });
    expect(await server.exited).toBe(1);
    const lines = server.output().trim().split('\n');
    expect(lines).toEqual([`proctor: port ${port} on 127.0.0.1 is already in use by another process: stop it, or set PORT to a free port`]);
    expect(fs.existsSync(dataDir)).toBe(false);
  } finally {
    holder.close();
    fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
  }
});

it('when the CLI prints a link without PORT or PUBLIC_URL, then it is on the address the running server recorded at its start', async () => {
  const db = await createTestDatabase();
  let server: ServedNode | undefined;
  try {
    server = await serveNode({ HOST: '127.0.0.1', DATABASE_URL: db.url, PROCTOR_DEMO: 'false', PROCTOR_EXECUTOR_CONCURRENCY: '0' });
    const { port } = server;
    // No one can sign in yet: the hint says how to make the first admin, then how to sign in.
    expect(server.output()).toContain('No one can sign in yet: npx proctor user create --email <your email> --name <your name> --admin');
    const cli = async (...args: string[]) => {
      const run = spawnProctor(args, { DATABASE_URL: db.url, PORT: '', PUBLIC_URL: '' });
      expect(await run.exited, run.output()).toBe(0);
      return run.output().trim();
    };
    await cli('user', 'create', '--email', 'ida@example.com', '--name', 'Ida', '--admin');
    expect(await cli('user', 'login-link', '--email', 'ida@example.com')).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/sign-in/link\\?token=`));
  } finally {
    await server?.stop();
    await db.drop();
  }
});
