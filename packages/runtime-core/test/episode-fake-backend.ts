/**
 * A fake in-memory RuntimeBackend for the episode tests: no WordPress. The "site" is a key/value map.
 * Result ids, timestamps and durations are random on purpose, so tests prove digests ignore them.
 */
import { randomUUID } from "node:crypto";
import { PolicyDeniedError, WpCodeboxError } from "../src/errors.js";
import type { ExecutionResult, ExecutionSpec, ObservationSpec, Runtime, RuntimeBackend, RuntimeCreateSpec, RuntimeInfo } from "../src/runtime.js";

export interface FakeBackendOptions {
  /** Give runtimes a fast `reset()` member. Default false. */
  withReset?: boolean;
  /** Give runtimes an `observe()` member. Default true. */
  withObserve?: boolean;
}

export interface FakeBackend extends RuntimeBackend {
  created: number;
  restored: number;
  resets: number;
  disposed: number;
  specs: RuntimeCreateSpec[];
  executed: ExecutionSpec[];
}

function arg(args: string[], name: string): string | undefined {
  const hit = args.find((a) => a.startsWith(`${name}=`));
  return hit === undefined ? undefined : hit.slice(name.length + 1);
}

export function createFakeBackend(options: FakeBackendOptions = {}): FakeBackend {
  const backend: FakeBackend = {
    kind: "fake",
    created: 0,
    restored: 0,
    resets: 0,
    disposed: 0,
    specs: [],
    executed: [],
    async create(spec) {
      backend.created += 1;
      backend.specs.push(spec);
      return makeRuntime(new Map());
    },
    async restore(snapshot) {
      backend.restored += 1;
      const entries = (snapshot as { state: Array<[string, string]> }).state;
      return makeRuntime(new Map(entries));
    },
  };

  function makeRuntime(site: Map<string, string>): Runtime {
    let disposed = false;
    const info = (): RuntimeInfo => ({
      id: `runtime-${randomUUID()}`,
      backend: "fake",
      wordpressVersion: "6.8",
      phpVersion: "8.3",
      siteUrl: "http://127.0.0.1:9400",
      bootMode: "cached",
      bootDurationMs: Math.random() * 100,
      mounts: [{ source: "/host/plugin", target: "/wordpress/wp-content/plugins/demo", mode: "readonly", kind: "directory" }],
      policy: { commands: ["kv.set", "kv.get", "fail", "sleep"], network: "deny", filesystem: "readwrite-mounts", secrets: "none" },
      plugins: ["demo"],
      themes: [],
    });
    const result = (spec: ExecutionSpec, fields: Partial<ExecutionResult>): ExecutionResult => ({
      id: randomUUID(),
      command: spec.command,
      args: spec.args,
      status: "ok",
      exitCode: 0,
      stdout: "",
      stderr: "",
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      durationMs: Math.random() * 50,
      ...fields,
    });
    const runtime: Runtime = {
      info,
      async execute(spec) {
        if (disposed) throw new WpCodeboxError("runtime-disposed", "disposed");
        backend.executed.push(spec);
        switch (spec.command) {
          case "kv.set":
            site.set(arg(spec.args, "key") ?? "", arg(spec.args, "value") ?? "");
            return result(spec, { stdout: "stored\n", json: { stored: true } });
          case "kv.get": {
            const value = site.get(arg(spec.args, "key") ?? "");
            return result(spec, { stdout: value ?? "", json: { value: value ?? null } });
          }
          case "fail":
            return result(spec, { status: "error", exitCode: 255, stderr: "PHP Fatal error: boom", error: { code: "php-fatal", message: "boom" } });
          case "sleep":
            return result(spec, { status: "timed-out", exitCode: 124, error: { code: "timeout", message: "wordpress.run-php: Timeout 10ms exceeded." } });
          case "deny":
            throw new PolicyDeniedError("deny");
          default:
            throw new WpCodeboxError("unknown-command", `Unknown command ${spec.command}.`, { command: spec.command });
        }
      },
      async snapshot() {
        return { semantics: "runtime-state-artifact", createdAt: new Date().toISOString(), state: [...site.entries()] };
      },
      async collectArtifacts() {
        return {
          info: info(),
          results: [],
          events: [],
          files: [{ path: "files/commands.jsonl", kind: "commands", contentType: "application/x-ndjson", content: "" }],
          secrets: [],
        };
      },
      async dispose() {
        disposed = true;
        backend.disposed += 1;
      },
    };
    if (options.withObserve ?? true) {
      runtime.observe = async (spec: ObservationSpec) => {
        const i = info();
        switch (spec.type) {
          case "runtime-info":
            return { type: "runtime-info", data: { wordpressVersion: i.wordpressVersion, phpVersion: i.phpVersion } };
          case "mounts":
            return { type: "mounts", data: { mounts: i.mounts.map((m) => ({ target: m.target, mode: m.mode })) } };
          case "kv":
            return { type: "kv", data: Object.fromEntries(site) };
          case "big":
            return { type: "big", data: { text: "x".repeat(70 * 1024), site: Object.fromEntries(site) } };
          case "scored":
            return { type: "scored", data: { reward: 1, success: true, nested: { grader: "g" } } };
          default:
            throw new WpCodeboxError("invalid-argument", `Unknown observation type ${spec.type}.`);
        }
      };
    }
    if (options.withReset) {
      runtime.reset = async () => {
        backend.resets += 1;
        site.clear();
      };
    }
    return runtime;
  }
  return backend;
}
