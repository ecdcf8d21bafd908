import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../server/src/cli.ts';
import { EmbeddedSocketServer } from '../../server/src/embedded-socket.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { freePort, type ServerProcess, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { testId } from '../helpers/server.ts';

describe('the embedded database shared by several connections', () => {
  let dir: string;
  let db: PGlite;
  let server: EmbeddedSocketServer;
  let url: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-embedded-'));
    db = await PGlite.create({ dataDir: dir });
    server = new EmbeddedSocketServer(db, 8);
    url = `postgres://postgres@127.0.0.1:${await server.listen({ host: '127.0.0.1', port: 0 })}/postgres`;
  });

  afterAll(async () => {
    await server?.close();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('when four connections run parameterised queries and transactions at once, then every answer is its own and none fails', async () => {
    const clients = Array.from({ length: 4 }, () => postgres(url, { max: 1, onnotice: () => {} }));
    await clients[0]!`create table interleave (id int primary key, owner int not null)`;
    const problems: string[] = [];
    await Promise.all(
      clients.map(async (sql, c) => {
        for (let i = 0; i < 250; i++) {
          try {
            if (i % 5 === 0) {
              await sql.begin(async (tx) => {
                await tx`insert into interleave (id, owner) values (${c * 10_000 + i}, ${c})`;
                const [row] = await tx<{ owner: number }[]>`select owner from interleave where id = ${c * 10_000 + i}`;
                if (row?.owner !== c) problems.push(`transaction of ${c} read ${JSON.stringify(row)}`);
              });
            } else {
              const [row] = await sql<{ n: number; who: string }[]>`select ${i}::int + ${c}::int as n, ${`client ${c}`} as who`;
              if (row?.n !== i + c || row.who !== `client ${c}`) problems.push(`client ${c} got ${JSON.stringify(row)}`);
            }
          } catch (error) {
            problems.push(`client ${c}: ${(error as Error).message}`);
          }
        }
      }),
    );
    await Promise.all(clients.map((sql) => sql.end({ timeout: 1 })));
    expect(problems).toEqual([]);
    const [count] = await postgres(url, { max: 1 })`select count(*)::int as n from interleave`;
    expect(count?.n).toBe(4 * 50);
  });

  it('when a connection goes away inside a transaction, then its work is rolled back and the others go on', async () => {
    const other = postgres(url, { max: 1, onnotice: () => {} });
    await other`create table if not exists abandoned (id int primary key)`;
    // A raw client: the startup, then BEGIN and an insert, then the socket is cut before COMMIT.
    const [host, port] = ['127.0.0.1', Number(new URL(url).port)];
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host, port }, () => {
        const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
        const startup = Buffer.alloc(8);
        startup.writeInt32BE(8 + params.length, 0);
        startup.writeInt32BE(196608, 4);
        socket.write(Buffer.concat([startup, params]));
        const query = Buffer.from('BEGIN; INSERT INTO abandoned (id) VALUES (1);\0');
        const header = Buffer.alloc(5);
        header.write('Q', 0);
        header.writeInt32BE(4 + query.length, 1);
        socket.write(Buffer.concat([header, query]));
      });
      let seen = '';
      socket.on('data', (data: Buffer) => {
        seen += data.toString('latin1');
        // Two ReadyForQuery: the startup's (idle) and the query's (in a transaction).
        if (seen.split('Z\0\0\0\x05').length > 2) {
          socket.destroy();
          resolve();
        }
      });
      socket.on('error', reject);
    });
    const rows = await other`select id from abandoned`;
    expect(rows).toHaveLength(0);
    const [state] = await other<{ n: number }[]>`select 1 as n`;
    expect(state?.n).toBe(1);
    await other.end({ timeout: 1 });
  });
});

describe('one embedded server under CLI commands, HTTP requests and the executor at once', () => {
  const ROUNDS = Number(process.env.EMBEDDED_ROUNDS ?? 1000);
  let dataDir: string;
  let server: ServerProcess;
  let base: string;
  let api: ReturnType<typeof client>;
  const saved = { ...process.env };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-embedded-server-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = {
      PORT: String(port),
      HOST: '127.0.0.1',
      PROCTOR_DATA_DIR: dataDir,
      DATABASE_URL: '',
      PROCTOR_DEMO: 'false',
      PROCTOR_EXECUTOR_POLL_MS: '10',
      LOG_LEVEL: 'warn',
    };
    server = spawnProctor(['serve'], env);
    await waitForHealth(base, 60_000);
    // The CLI below runs in this process, as `proctor` would, against the server's data directory.
    process.env.PROCTOR_DATA_DIR = dataDir;
    delete process.env.DATABASE_URL;
    const key = await cliOutput(['project', 'create', '--name', 'busy', '--repo', '/nonexistent']).then(() => cliOutput(['key', 'create', '--project', '1']));
    api = client(base, key);
    expect((await api.post('/api/environments', { name: 'Staging', slug: 'staging' })).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    process.env = saved;
    server?.child.kill('SIGTERM');
    await server?.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** `proctor <args>` in this process; its output, or the error it ended with. */
  async function cliOutput(args: string[]): Promise<string> {
    const write = process.stdout.write;
    let out = '';
    process.stdout.write = ((chunk: string) => {
      out += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      const code = await main(args);
      if (code !== 0) throw new Error(`proctor ${args.join(' ')} exited ${code}`);
    } finally {
      process.stdout.write = write;
    }
    return out.trim();
  }

  it(`when ${ROUNDS} rounds of a CLI command, a triggered run and a report run with results go at once, then none fails and the server logs no error`, async () => {
    const failures: string[] = [];
    const check = (what: string) => (answer: { status: number; text: string }) => {
      if (answer.status >= 300) failures.push(`${what}: HTTP ${answer.status} ${answer.text}`);
    };
    for (let round = 0; round < ROUNDS; round++) {
      const id = testId(round);
      const work = [
        cliOutput(round % 2 === 0 ? ['key', 'list', '--project', '1'] : ['migrate']).catch((error: Error) => failures.push(`cli: ${error.message}`)),
        round % 10 === 0 ? api.put('/api/test-runs', { environment: 'staging' }).then(check('trigger')) : Promise.resolve(),
        (async () => {
          const run = await api.post('/api/test-runs/report', { environment: 'staging', run_key: `round-${round}` });
          check('report')(run);
          const runId = run.body.data?.test_run?.id as number;
          check('begin')(await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(id)] }));
          check('results')(await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: attemptsOf(id, 'expected') }));
          check('list')(await api.get('/api/test-runs?per_page=5'));
        })().catch((error: Error) => failures.push(`http: ${error.message}`)),
      ];
      await Promise.all(work);
    }
    expect(failures).toEqual([]);
    expect(server.output()).not.toMatch(/portal|PostgresError|"level":50/);
  }, 600_000);
});
