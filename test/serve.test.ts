import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { freePort, spawnProctor } from './helpers/process.ts';

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
