// The sample suite's site: one static page, served on the port given as the first argument.
import http from 'node:http';
import fs from 'node:fs';

const port = Number(process.argv[2] ?? 4173);
const page = fs.readFileSync(new URL('./index.html', import.meta.url));

http
  .createServer((req, res) => {
    if (req.url === '/healthz') return res.end('ok');
    if (req.url === '/' || req.url === '/index.html') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      return res.end(page);
    }
    res.statusCode = 404;
    res.end('not found');
  })
  .listen(port, '127.0.0.1');
