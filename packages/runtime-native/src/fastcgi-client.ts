/**
 * A small FastCGI client (the responder role) for Debian's `php-cgi -b`: one request per
 * connection on a unix socket. It sends BEGIN_REQUEST, the CGI parameters (PARAMS) and the body
 * (STDIN), then reads STDOUT, STDERR and END_REQUEST, and parses the CGI response PHP writes on
 * STDOUT (`Status:`, headers, every `Set-Cookie` kept apart, the body).
 *
 * Written here because the npm FastCGI clients are unmaintained (the most used one was last
 * changed years ago, has no types and no body bounds).
 */
import { connect } from "node:net";

const VERSION = 1;
const TYPE = { BEGIN_REQUEST: 1, ABORT_REQUEST: 2, END_REQUEST: 3, PARAMS: 4, STDIN: 5, STDOUT: 6, STDERR: 7 } as const;
const ROLE_RESPONDER = 1;
/** Largest record body FastCGI allows (its length field is 16 bits). */
const MAX_RECORD_BYTES = 65_535;
/** Longest CGI header block accepted before the body (bytes). */
const MAX_HEADER_BYTES = 1 << 20;

/** One FastCGI request. */
export interface FastCgiRequest {
  /** CGI parameters (SCRIPT_FILENAME, REQUEST_METHOD, HTTP_*…), sent as given. */
  params: Record<string, string>;
  /** The request body (STDIN); CONTENT_LENGTH should be set to its length. */
  body?: Uint8Array;
}

/** What PHP answered. */
export interface FastCgiResponse {
  /** From the CGI `Status:` header; 200 without one (302 when only `Location:` is sent, as CGI says). */
  status: number;
  /** Header names lower-case; each value as sent (several `set-cookie` stay several). */
  headers: Record<string, string[]>;
  /** The body, at most `capBytes` bytes. */
  body: Buffer;
  /** Body bytes PHP sent, kept or not. */
  bodyBytes: number;
  /** True when the body was longer than `capBytes`. */
  truncated: boolean;
  /** What PHP wrote on FastCGI's STDERR (its error log for this request), at most `capBytes` bytes. */
  stderr: string;
  /** END_REQUEST's application status (PHP's exit status). */
  appStatus: number;
}

/**
 * Waits until a server accepts connections on `socketPath` (the socket file appears when the
 * server binds it, a moment before it listens).
 * @param timeoutMs - give up after this long (ms).
 * @param stillStarting - checked between attempts; returning a string gives up with that reason.
 * @throws Error when the time runs out or `stillStarting` gives a reason.
 */
export async function waitForSocket(socketPath: string, timeoutMs: number, stillStarting: () => string | undefined = () => undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = stillStarting();
    if (reason !== undefined) throw new Error(reason);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(socketPath);
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing accepted connections on ${socketPath} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Encodes one record (header, content, padding to 8 bytes). */
function record(type: number, requestId: number, content: Uint8Array): Buffer {
  const padding = (8 - (content.length % 8)) % 8;
  const out = Buffer.alloc(8 + content.length + padding);
  out.writeUInt8(VERSION, 0);
  out.writeUInt8(type, 1);
  out.writeUInt16BE(requestId, 2);
  out.writeUInt16BE(content.length, 4);
  out.writeUInt8(padding, 6);
  out.set(content, 8);
  return out;
}

/** A stream (PARAMS, STDIN) as records of at most 65535 bytes, ended by an empty one. */
function streamRecords(type: number, requestId: number, data: Uint8Array): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += MAX_RECORD_BYTES) out.push(record(type, requestId, data.subarray(at, at + MAX_RECORD_BYTES)));
  out.push(record(type, requestId, new Uint8Array(0)));
  return out;
}

/** FastCGI's name-value pair encoding (lengths in 1 byte below 128, else 4 with the top bit set). */
export function encodeParams(params: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const length = (n: number) => {
    if (n < 128) return Buffer.from([n]);
    const b = Buffer.alloc(4);
    b.writeUInt32BE((n | 0x80000000) >>> 0);
    return b;
  };
  for (const [name, value] of Object.entries(params)) {
    const k = Buffer.from(name, "utf8");
    const v = Buffer.from(value, "utf8");
    parts.push(length(k.length), length(v.length), k, v);
  }
  return Buffer.concat(parts);
}

/** The records of one whole request (BEGIN_REQUEST, PARAMS, STDIN). */
export function encodeRequest(requestId: number, request: FastCgiRequest): Buffer {
  const begin = Buffer.alloc(8);
  begin.writeUInt16BE(ROLE_RESPONDER, 0);
  // flags 0: the application closes the connection when the request ends.
  return Buffer.concat([record(TYPE.BEGIN_REQUEST, requestId, begin), ...streamRecords(TYPE.PARAMS, requestId, encodeParams(request.params)), ...streamRecords(TYPE.STDIN, requestId, request.body ?? new Uint8Array(0))]);
}

/**
 * Splits a CGI response's header block into status and headers.
 * @param head - the text before the blank line.
 */
export function parseCgiHeaders(head: string): { status: number; headers: Record<string, string[]> } {
  const headers: Record<string, string[]> = {};
  let status: number | undefined;
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "status") {
      const code = Number(/^(\d{3})/.exec(value)?.[1]);
      if (Number.isInteger(code)) status = code;
      continue;
    }
    (headers[name] ??= []).push(value);
  }
  return { status: status ?? (headers.location ? 302 : 200), headers };
}

/**
 * Sends one request to a FastCGI server on a unix socket and reads the whole answer.
 * @param socketPath - host path of the server's socket.
 * @param options.capBytes - body (and stderr) bytes kept; the rest is counted, not kept.
 * @param options.signal - aborting closes the connection (php-cgi then drops the request once it writes).
 * @throws Error when the socket cannot be reached, closes before END_REQUEST, the header block
 *   passes 1 MiB, or `signal` aborts.
 */
export function fastCgiRequest(socketPath: string, request: FastCgiRequest, options: { capBytes: number; signal?: AbortSignal }): Promise<FastCgiResponse> {
  return new Promise<FastCgiResponse>((resolve, reject) => {
    const socket = connect(socketPath);
    let pending: Buffer = Buffer.alloc(0);
    let head: Buffer[] | undefined = [];
    let headBytes = 0;
    let parsed: { status: number; headers: Record<string, string[]> } | undefined;
    const body: Buffer[] = [];
    let kept = 0;
    let bodyBytes = 0;
    const stderr: Buffer[] = [];
    let stderrKept = 0;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      options.signal?.removeEventListener("abort", onAbort);
      reject(error);
    };
    const onAbort = () => fail(new Error("FastCGI request aborted"));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const keepBody = (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (kept >= options.capBytes) return;
      const part = chunk.length > options.capBytes - kept ? chunk.subarray(0, options.capBytes - kept) : chunk;
      body.push(Buffer.from(part));
      kept += part.length;
    };
    const onStdout = (chunk: Buffer) => {
      if (!head) return keepBody(chunk);
      head.push(Buffer.from(chunk));
      headBytes += chunk.length;
      const all = Buffer.concat(head);
      const crlf = all.indexOf("\r\n\r\n");
      const lf = all.indexOf("\n\n");
      const end = crlf >= 0 && (lf < 0 || crlf < lf) ? { at: crlf, len: 4 } : lf >= 0 ? { at: lf, len: 2 } : undefined;
      if (!end) {
        if (headBytes > MAX_HEADER_BYTES) fail(new Error("FastCGI response headers exceed 1 MiB"));
        else head = [all];
        return;
      }
      parsed = parseCgiHeaders(all.subarray(0, end.at).toString("latin1"));
      head = undefined;
      keepBody(all.subarray(end.at + end.len));
    };
    socket.on("data", (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 8) {
        const type = pending.readUInt8(1);
        const length = pending.readUInt16BE(4);
        const padding = pending.readUInt8(6);
        if (pending.length < 8 + length + padding) break;
        const content = pending.subarray(8, 8 + length);
        pending = pending.subarray(8 + length + padding);
        if (type === TYPE.STDOUT && length > 0) onStdout(content);
        else if (type === TYPE.STDERR && length > 0 && stderrKept < options.capBytes) {
          const part = content.subarray(0, options.capBytes - stderrKept);
          stderr.push(Buffer.from(part));
          stderrKept += part.length;
        } else if (type === TYPE.END_REQUEST) {
          if (settled) return;
          settled = true;
          options.signal?.removeEventListener("abort", onAbort);
          socket.destroy();
          // A response with no blank line (nothing but headers, or nothing at all).
          if (head) parsed = parseCgiHeaders(Buffer.concat(head).toString("latin1"));
          resolve({
            status: parsed?.status ?? 200,
            headers: parsed?.headers ?? {},
            body: Buffer.concat(body),
            bodyBytes,
            truncated: bodyBytes > kept,
            stderr: Buffer.concat(stderr).toString("utf8"),
            appStatus: content.length >= 4 ? content.readUInt32BE(0) : 0,
          });
          return;
        }
      }
    });
    socket.on("error", (error) => fail(error));
    socket.on("close", () => fail(new Error("FastCGI server closed the connection before the request ended")));
    socket.write(encodeRequest(1, request));
  });
}
