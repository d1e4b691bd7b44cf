/**
 * Test helper: a private `redis-server` (Debian's /usr/bin/redis-server) on a random loopback port,
 * with append-only persistence in a temp dir, never a system service. `restart()` stops it and
 * starts it again on the same port and data, as a Redis restart in production would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestRedis {
  port: number;
  url: string;
  dir: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function launch(port: number, dir: string): Promise<ChildProcess> {
  const bin = process.env.WP_CODEBOX_REDIS_SERVER ?? "redis-server";
  const child = spawn(bin, ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no", "--protected-mode", "yes"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`redis-server did not start on ${port}: ${out}`)), 15000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start redis-server (${bin}): ${error.message}; install it with apt-get install redis-server`));
    });
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (out.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${out}`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** Starts a private redis-server; call `stop()` in `after`. */
export async function startTestRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), "wp-codebox-redis-"));
  const port = await freePort();
  let child = await launch(port, dir);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    async restart() {
      await stopChild(child);
      child = await launch(port, dir);
    },
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
