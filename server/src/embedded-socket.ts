import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

// PGlite is one PostgreSQL session. Every connection to the embedded database shares it, so one
// connection must hold it from its first message until PostgreSQL is idle again (ReadyForQuery
// with status I): through an extended-protocol exchange (Parse, Bind, Execute … Sync), whose
// unnamed statement and portal live in the session, and through a transaction. pglite-socket
// 0.2.17 pins a connection only inside a transaction: the messages of two connections' exchanges
// interleaved, and one connection's Execute then met the other's Sync ("portal \"\" does not exist",
// electric-sql/pglite#1046). This server speaks just enough of the protocol to schedule whole
// exchanges.

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

const READY_FOR_QUERY = 'Z'.charCodeAt(0);
const TERMINATE = 'X'.charCodeAt(0);
const PARSE = 'P'.charCodeAt(0);

/** Finds each ReadyForQuery in a stream of backend messages cut anywhere, and keeps its status. */
class ReadyScanner {
  private header: Buffer = Buffer.alloc(0);
  private type = 0;
  private bodyLeft = 0;
  private bodyRead = 0;
  /** The transaction status of the last ReadyForQuery seen: I idle, T in a transaction, E in a failed one. */
  status: string | null = null;

  feed(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.bodyLeft === 0) {
        const wanted = 5 - this.header.length;
        this.header = Buffer.concat([this.header, chunk.subarray(at, at + wanted)]);
        at += Math.min(wanted, chunk.length - at);
        if (this.header.length < 5) return;
        this.type = this.header[0] as number;
        this.bodyLeft = this.header.readInt32BE(1) - 4;
        this.bodyRead = 0;
        this.header = Buffer.alloc(0);
        continue;
      }
      const taken = Math.min(this.bodyLeft, chunk.length - at);
      if (this.type === READY_FOR_QUERY && this.bodyRead === 0) this.status = String.fromCharCode(chunk[at] as number);
      this.bodyRead += taken;
      this.bodyLeft -= taken;
      at += taken;
    }
  }
}

/** A frontend message: the startup packet (no type byte) or a typed one. */
interface Message {
  bytes: Buffer;
  type: number | null;
}

class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;
  readonly pending: Message[] = [];
  /** Named statements this connection prepared, deallocated when it goes: the session outlives it. */
  readonly statements = new Set<string>();
  closed = false;

  constructor(
    readonly socket: net.Socket,
    private readonly arrived: () => void,
  ) {}

  receive(data: Buffer): void {
    this.buffer = this.buffer.length === 0 ? data : Buffer.concat([this.buffer, data]);
    for (let message = this.nextMessage(); message; message = this.nextMessage()) {
      if (message.type === PARSE) {
        const name = message.bytes.toString('utf8', 5, message.bytes.indexOf(0, 5));
        if (name) this.statements.add(name);
      }
      this.pending.push(message);
    }
    if (this.pending.length > 0) this.arrived();
  }

  private nextMessage(): Message | null {
    if (!this.started) {
      if (this.buffer.length < 8) return null;
      const length = this.buffer.readInt32BE(0);
      if (this.buffer.length < length) return null;
      const code = this.buffer.readInt32BE(4);
      const bytes = this.buffer.subarray(0, length);
      this.buffer = this.buffer.subarray(length);
      // No TLS and no GSS encryption over a socket only this user can open: the client goes on in the clear.
      if (code === SSL_REQUEST || code === GSS_REQUEST) {
        this.socket.write('N');
        return this.nextMessage();
      }
      // There is no backend process to interrupt: a cancel request is dropped, as PostgreSQL's protocol allows.
      if (code === CANCEL_REQUEST) {
        this.socket.end();
        return null;
      }
      if (code !== PROTOCOL_3) {
        this.socket.destroy();
        return null;
      }
      this.started = true;
      return { bytes, type: null };
    }
    if (this.buffer.length < 5) return null;
    const length = 1 + this.buffer.readInt32BE(1);
    if (this.buffer.length < length) return null;
    const bytes = this.buffer.subarray(0, length);
    this.buffer = this.buffer.subarray(length);
    return { bytes, type: bytes[0] as number };
  }
}

/** An ErrorResponse with a severity, an SQLSTATE and a message, as PostgreSQL words its refusals. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([header, fields]);
}

function simpleQuery(text: string): Buffer {
  const body = Buffer.from(`${text}\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('Q', 0);
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}

const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
const FAILED = 'failed';

/** The embedded database on a Unix socket, for the server's pool, its HTTP workers and the CLI. */
export class EmbeddedSocketServer {
  private readonly server: net.Server;
  private readonly connections = new Set<Connection>();
  /** The connection PostgreSQL's session belongs to until it is idle again; null when it is free. */
  private owner: Connection | null = null;
  private running = false;
  /** Set once the server closes: nothing more reaches the database, which closes after it. */
  private closing = false;

  constructor(
    private readonly db: PGlite,
    private readonly maxConnections: number,
  ) {
    this.server = net.createServer((socket) => this.accept(socket));
  }

  /**
   * Listens on a Unix socket (the server's: only its user reaches it) or on a TCP port (tests and
   * benches: `port` 0 takes a free one). Resolves with the TCP port, or null on a socket.
   */
  listen(target: { path: string } | { host: string; port: number }): Promise<number | null> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(target, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : null);
      });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const connection of this.connections) connection.socket.destroy();
    await closed;
    // A release that was under way when the sockets went finishes before the database closes.
    while (this.running) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  private accept(socket: net.Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    if (this.connections.size >= this.maxConnections) {
      socket.end(errorResponse('53300', `the embedded database takes ${this.maxConnections} connections at most`));
      return;
    }
    // Answers go out as they come: Nagle's algorithm would hold each small one for the client's delayed ACK.
    socket.setNoDelay(true);
    const connection = new Connection(socket, () => void this.pump());
    this.connections.add(connection);
    socket.on('data', (data: Buffer) => connection.receive(data));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      connection.closed = true;
      connection.pending.length = 0;
      void this.pump();
    });
  }

  /**
   * The next connection to serve: the owner while it holds the session, else the first that went
   * away (to clean up after it) or has work, in the order they connected.
   */
  private next(): Connection | null {
    if (this.owner) return this.owner.closed || this.owner.pending.length > 0 ? this.owner : null;
    for (const connection of this.connections) if (connection.closed || connection.pending.length > 0) return connection;
    return null;
  }

  /** Serves messages one at a time until none can be served now; one pump runs at a time. */
  private async pump(): Promise<void> {
    if (this.running || this.closing) return;
    this.running = true;
    try {
      for (let connection = this.next(); connection && !this.closing; connection = this.next()) {
        this.owner = connection;
        if (connection.closed) {
          await this.release(connection);
          continue;
        }
        const message = connection.pending.shift() as Message;
        if (message.type === TERMINATE) {
          connection.socket.end();
          continue;
        }
        const status = await this.execute(message.bytes, (data) => connection.socket.writable && connection.socket.write(Buffer.from(data)));
        // PGlite threw rather than answering: the client cannot be told where it stands, so it is
        // cut off, and the session cleaned up after it once its socket has closed.
        if (status === FAILED) connection.socket.destroy();
        else if (status === 'I') this.owner = null;
      }
    } finally {
      this.running = false;
    }
  }

  /** Runs one message; answers the transaction status of its ReadyForQuery, null when it sent none, FAILED when PGlite threw. */
  private async execute(message: Uint8Array, answer: (data: Uint8Array) => void): Promise<string | null> {
    const scanner = new ReadyScanner();
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(message, {
          onRawData: (data) => {
            scanner.feed(data);
            answer(data);
          },
        }),
      );
    } catch {
      return FAILED;
    }
    return scanner.status;
  }

  /**
   * A connection that went away: if it held the session, its exchange is ended (Sync) and its
   * transaction rolled back; its named statements are deallocated; then the session is free.
   */
  private async release(connection: Connection): Promise<void> {
    const ignore = () => undefined;
    const status = await this.execute(SYNC, ignore);
    if (status === 'T' || status === 'E') await this.execute(simpleQuery('ROLLBACK'), ignore);
    for (const name of connection.statements) await this.execute(simpleQuery(`DEALLOCATE "${name.replace(/"/g, '""')}"`), ignore);
    this.connections.delete(connection);
    this.owner = null;
  }
}
