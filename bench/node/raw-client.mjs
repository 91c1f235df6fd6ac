// Streamable HTTP tool calls from plain keep-alive HTTP/1.1 connections, in a Node process of its
// own: the same client as the bench's PlainHttp (raw request out, status, headers, and a
// Content-Length or chunked body back) on the other runtime, so each server is measured by a
// client on its own runtime and by one on the other's.
//
//   [BENCH_TOKEN=<bearer token>] node raw-client.mjs <url> <session: 0|1> <json> <clients> <warm-up ms> <measure ms>
//
// Prints one JSON line: the latency of every call after the warm-up (nanoseconds), and how many
// calls failed (no JSON-RPC result, a malformed answer, none within 30 s, or the connection closed
// under it) or were refused (isError).
import net from 'node:net';

const [url, session, json, clients, warmupMs, measureMs] = process.argv.slice(2);
if (measureMs === undefined) {
  console.error('usage: [BENCH_TOKEN=<token>] node raw-client.mjs <url> <session: 0|1> <json> <clients> <warm-up ms> <measure ms>');
  process.exit(2);
}
const token = process.env.BENCH_TOKEN;
const ANSWER_TIMEOUT_MS = 30_000;
const target = new URL(url);
const warmEnd = process.hrtime.bigint() + BigInt(warmupMs) * 1_000_000n;
const end = warmEnd + BigInt(measureMs) * 1_000_000n;
const tally = { latencies: [], failed: 0, refused: 0 };

/** One keep-alive connection that sends a POST and resolves with the whole answer. */
class Connection {
  constructor(socket) {
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    this.waiting = null;
    this.closed = false;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.settle();
    });
    socket.on('close', () => {
      this.closed = true;
      this.fail(new Error('the server closed the connection'));
    });
    socket.on('error', (e) => this.fail(e));
    socket.setTimeout(ANSWER_TIMEOUT_MS, () => {
      if (this.waiting) this.broken(`no answer within ${ANSWER_TIMEOUT_MS} ms`);
    });
  }

  static open() {
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(target.port), target.hostname, () => resolve(new Connection(socket)));
      socket.once('error', reject);
    });
  }

  post(headers, body) {
    const bytes = Buffer.from(body, 'utf8');
    let head = `POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\n`
      + 'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n'
      + `Content-Length: ${bytes.length}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error('the server closed the connection'));
        return;
      }
      this.waiting = { resolve, reject };
      this.socket.write(Buffer.concat([Buffer.from(head + '\r\n', 'latin1'), bytes]));
    });
  }

  /** Resolves the waiting call once the buffer holds a whole answer. */
  settle() {
    if (!this.waiting) return;
    const headEnd = this.buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const lines = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = Number(lines[0].split(' ')[1]);
    const headers = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let at = headEnd + 4;
    const parts = [];
    if ((headers['transfer-encoding'] || '').toLowerCase() === 'chunked') {
      for (;;) {
        const lineEnd = this.buffer.indexOf('\r\n', at);
        if (lineEnd < 0) return;
        const sizeLine = this.buffer.subarray(at, lineEnd).toString('latin1').split(';')[0].trim();
        const size = /^[0-9a-fA-F]+$/.test(sizeLine) ? parseInt(sizeLine, 16) : NaN;
        if (!Number.isSafeInteger(size)) return this.broken(`a chunk size of ${JSON.stringify(sizeLine)}`);
        if (this.buffer.length < lineEnd + 2 + size + 2) return;
        parts.push(this.buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
    } else {
      const length = /^[0-9]+$/.test(headers['content-length'] ?? '0') ? Number(headers['content-length'] ?? 0) : NaN;
      if (!Number.isSafeInteger(length)) return this.broken(`a Content-Length of ${JSON.stringify(headers['content-length'])}`);
      if (this.buffer.length < at + length) return;
      parts.push(this.buffer.subarray(at, at + length));
      at += length;
    }
    this.buffer = this.buffer.subarray(at);
    const { resolve } = this.waiting;
    this.waiting = null;
    resolve({ status, headers, body: Buffer.concat(parts).toString('utf8') });
  }

  /** An answer this client cannot read: the call fails and the connection is dropped. */
  broken(what) {
    this.fail(new Error(`unreadable answer: ${what}`));
    this.socket.destroy();
  }

  fail(error) {
    if (this.waiting) {
      const { reject } = this.waiting;
      this.waiting = null;
      reject(error);
    }
  }

  close() {
    this.socket.destroy();
  }
}

function headersOf(sessionId) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (sessionId) headers['Mcp-Session-Id'] = sessionId;
  return headers;
}

/** The MCP handshake a stateful server requires; returns the session id it assigned. */
async function initialize(connection) {
  const init = await connection.post(headersOf(null), JSON.stringify({
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'sandbox-mcp-bench', version: '1' } },
  }));
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || !id) throw new Error(`initialize: HTTP ${init.status}, no session id: ${init.body}`);
  await connection.post(headersOf(id), '{"jsonrpc":"2.0","method":"notifications/initialized"}');
  return id;
}

/** One client's calls, on one connection at a time; a connection closed under a call fails that call. */
async function client() {
  while (process.hrtime.bigint() < end) {
    const connection = await Connection.open();
    try {
      const headers = headersOf(session === '1' ? await initialize(connection) : null);
      let now;
      while ((now = process.hrtime.bigint()) < end) {
        let answer;
        try {
          answer = await connection.post(headers, json);
        } catch {
          if (now >= warmEnd) tally.failed++;
          break;
        }
        const took = process.hrtime.bigint() - now;
        if (now < warmEnd) continue;
        if (answer.status !== 200 || !answer.body.includes('"result"')) tally.failed++;
        else if (answer.body.includes('"isError":true')) tally.refused++;
        else tally.latencies.push(Number(took));
      }
    } finally {
      connection.close();
    }
  }
}

await Promise.all(Array.from({ length: Number(clients) }, client));
console.log(JSON.stringify({ latencies_ns: tally.latencies, failed: tally.failed, refused: tally.refused }));
