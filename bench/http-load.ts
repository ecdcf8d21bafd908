// A load generator in its own process: CONNECTIONS keep-alive connections request URL for
// SECONDS and print how many answers came back, and their statuses.
import http from 'node:http';

const [url, connections, seconds] = [process.argv[2] as string, Number(process.argv[3] ?? 16), Number(process.argv[4] ?? 3)];
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const deadline = performance.now() + seconds * 1000;
const statuses: Record<number, number> = {};
let requests = 0;

function once(): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (response) => {
        response.resume();
        response.on('end', () => {
          statuses[response.statusCode ?? 0] = (statuses[response.statusCode ?? 0] ?? 0) + 1;
          resolve();
        });
      })
      .on('error', reject);
  });
}

const started = performance.now();
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      await once();
      requests++;
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;
agent.destroy();
process.stdout.write(JSON.stringify({ requests, seconds: elapsed, statuses }));
