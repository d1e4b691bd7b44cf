/**
 * Who a command acts as, and how WordPress recognises them: `admin`, `anonymous` and
 * `user:<id|login>` resolved to user ids, auth cookies plus a REST nonce per user (cached until the
 * site's state changes), and the one-click administrator login URL for a browser on this machine.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { WpCodeboxError, quoteValue } from "@wp-codebox/runtime-core";
import type { PhpWorkerHost } from "../worker/php-worker-host.js";
import type { WorkerHttpResult, WorkerRunResult } from "../worker/php-worker-protocol.js";
import { phpProgram } from "../php-source/php-assets.js";
import type { RuntimeLock } from "./runtime-lock.js";
import { type Actor, type ActorAuth, outcomeFromRun, withFatalRecorder, phpValue } from "@wp-codebox/commands";

/** Path of the one-click login URL on the sandbox's own origin (see `loginUrl()`). */
const LOGIN_PATH = "/__wp-codebox/login";

/** What `SiteActors` uses of its runtime. */
export interface SiteActorsHost {
  /** The worker that runs internal helpers (it changes when a worker is replaced). */
  primary(): PhpWorkerHost;
  /** The runtime's lock: a login holds it shared while it asks WordPress for cookies. */
  lock: RuntimeLock;
  /** Records `admin-login` when the login URL is used. */
  onEvent(type: string, data: Record<string, unknown>): void;
}

export class SiteActors {
  private adminUserId: number | undefined;
  private readonly authCache = new Map<number, ActorAuth>();
  /** Secret of the one-click admin login URL (`loginUrl()`); undefined until asked for. */
  private loginSecret: string | undefined;

  constructor(private readonly host: SiteActorsHost) {}

  /** Forgets cached auth: the site's state changed (reset, restore, a killed worker), so the session tokens behind it may be gone. */
  forgetAuth(): void {
    this.authCache.clear();
  }

  /** Runs an internal helper program (with the fatal recorder) and returns the JSON it printed. */
  private async phpJsonCall(program: string): Promise<unknown> {
    const run = await this.host.primary().call<WorkerRunResult>({ op: "run", code: withFatalRecorder(program), capBytes: 1 << 20 });
    const outcome = outcomeFromRun(run);
    if (outcome.status !== "ok" || outcome.json === undefined) {
      throw new WpCodeboxError("php-error", `Internal PHP helper failed: ${outcome.error?.message ?? outcome.stdout.slice(0, 300)}`);
    }
    return outcome.json;
  }

  /** The id of the administrator (`ref` null), of user id `ref` (digits) or of login `ref`; 0 when there is none. */
  private async userId(ref: string | null): Promise<number> {
    const r = (await this.phpJsonCall(phpProgram({ wp_codebox_user_ref: phpValue(ref, "as=user:") }, "actors/admin-user.php", "actors/resolve-user.php"))) as { id: number };
    return r.id;
  }

  /**
   * Resolves `as`: `admin` (default: the `admin` user, else the first administrator), `anonymous`
   * (user 0), `user:<id>` or `user:<login>`.
   * @throws `invalid-argument` for another form or a user that does not exist; `php-error`.
   */
  async resolveActor(as: string | undefined): Promise<Actor> {
    const value = as ?? "admin";
    if (value === "anonymous") return { userId: 0, label: "anonymous" };
    if (value === "admin") {
      this.adminUserId ??= await this.userId(null);
      return { userId: this.adminUserId, label: "admin" };
    }
    // No login holds a NUL byte (PHP would cut the string there and look up someone else).
    const m = value.includes("\0") ? null : /^user:(.+)$/.exec(value);
    if (!m) throw new WpCodeboxError("invalid-argument", `as=${quoteValue(value)} is not valid: use admin, anonymous, user:<id> or user:<login>.`);
    const id = await this.userId(m[1]!);
    if (!id) throw new WpCodeboxError("invalid-argument", `as=${quoteValue(value)}: no such WordPress user. Create it first (wp_insert_user) or use as=admin.`);
    return { userId: id, label: value };
  }

  /**
   * The user a PHP wrapper switches to (`phpWrapper`): the id when it is known without asking
   * WordPress, or `"admin"` for an administrator not looked up yet, whom the wrapper finds in the
   * same request (a one-shot run-php then loads WordPress once, not twice).
   * @throws like `resolveActor`.
   */
  async wrapperUser(as: string | undefined): Promise<number | "admin"> {
    const value = as ?? "admin";
    if (value === "admin") return this.adminUserId ?? "admin";
    return (await this.resolveActor(value)).userId;
  }

  /**
   * WordPress auth for an actor: a new session token, the auth and logged-in cookies (valid one
   * day) and a `wp_rest` nonce. Cached per user until `forgetAuth()`.
   * @throws `php-error`.
   */
  async authFor(actor: Actor): Promise<ActorAuth> {
    const cached = this.authCache.get(actor.userId);
    if (cached) return cached;
    const auth = (await this.phpJsonCall(phpProgram({ wp_codebox_user_id: phpValue(actor.userId) }, "actors/auth-cookies.php"))) as ActorAuth;
    this.authCache.set(actor.userId, auth);
    return auth;
  }

  /**
   * A one-click administrator login for a browser on this machine: `<origin>/__wp-codebox/login?key=…`
   * sets WordPress's auth cookies for the `admin` user and redirects to `/wp-admin/`. The key is
   * random per runtime (256 bits) and compared in constant time; the URL works until disposal or
   * `forgetLoginUrl()` (a pool recycle).
   * @param origin - the loopback server's origin.
   */
  loginUrl(origin: string): string {
    this.loginSecret ??= randomBytes(32).toString("base64url");
    return `${origin}${LOGIN_PATH}?key=${this.loginSecret}`;
  }

  /**
   * Invalidates the login URL: the next `loginUrl()` makes a new key. For a sandbox handed to
   * another session (pool recycle): the earlier session's link must not log into it.
   */
  forgetLoginUrl(): void {
    this.loginSecret = undefined;
  }

  /** True when `url` asks for the login URL (only once `loginUrl()` made one). */
  isLoginRequest(url: string, origin: string): boolean {
    return this.loginSecret !== undefined && url.startsWith(`${origin}${LOGIN_PATH}`);
  }

  /** Answers a request to the login URL: 302 to `/wp-admin/` with the cookies, or 403 for a wrong key. */
  async login(url: string, origin: string): Promise<WorkerHttpResult> {
    const key = new URL(url).searchParams.get("key") ?? "";
    const expected = createHash("sha256").update(this.loginSecret ?? "").digest();
    const text = (status: number, message: string, headers: Record<string, string[]> = {}): WorkerHttpResult => {
      const data = new TextEncoder().encode(message);
      return { status, headers: { "content-type": ["text/plain; charset=utf-8"], "cache-control": ["no-store"], ...headers }, body: { data, bytes: data.byteLength, truncated: false } };
    };
    if (!timingSafeEqual(createHash("sha256").update(key).digest(), expected)) return text(403, "wp-codebox: this login link is not valid for this sandbox.\n");
    const auth = await this.host.lock.withShared(async () => this.authFor(await this.resolveActor("admin")));
    const cookies = auth.cookies.map((c) => `${c.name}=${encodeURIComponent(c.value)}; Path=/; HttpOnly; SameSite=Lax`);
    this.host.onEvent("admin-login", {});
    return text(302, "Logged in: continue to /wp-admin/\n", { location: [`${origin}/wp-admin/`], "set-cookie": cookies });
  }
}
