/**
 * What the native backend refuses before boot (missing Debian packages, options it does not
 * support, another PHP version), and the confinement every process gets. Boots nothing.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { WpCodeboxError, type RuntimeCreateSpec } from "@wp-codebox/runtime-core";
import { DEFAULT_NATIVE_TOOLS, PHP_LIMITS, createNativeBackend, nativeToolsStatus } from "@wp-codebox/runtime-native";
import { RELAY_UID_OFFSET, confinedCommand } from "../src/bubblewrap.js";

const wordpress = { preflight: () => "6.5.5", tree: async () => ({ dir: "/nonexistent", release: "6.5.5" }) };
const installed = nativeToolsStatus().ok;

function refusal(spec: RuntimeCreateSpec, backend = createNativeBackend({ wordpress })): WpCodeboxError {
  try {
    backend.preflight(spec);
  } catch (error) {
    assert.ok(error instanceof WpCodeboxError, String(error));
    return error;
  }
  assert.fail("preflight accepted the spec");
}

describe("native backend preflight", () => {
  it("without a Debian program: native-backend-unavailable (environment, exit 3) naming its package", () => {
    for (const [tool, pkg] of [["bwrap", "bubblewrap"], ["mariadbd", "mariadb-server"], ["mariadbDump", "mariadb-client"], ["php", "php-cli"], ["phpCgi", "php-cgi"]] as const) {
      const error = refusal({}, createNativeBackend({ wordpress, tools: { [tool]: `/nonexistent/${tool}` } }));
      assert.equal(error.code, "native-backend-unavailable");
      assert.equal(error.category, "environment");
      assert.match(error.message, new RegExp(`not installed: .*${pkg}`));
      assert.match(error.message, /apt-get install -y php-cli php-cgi php-mysql .* mariadb-server mariadb-client bubblewrap/);
    }
  });

  const cases: { name: string; spec: RuntimeCreateSpec; code: string; option?: string }[] = [
    { name: "a virtual clock", spec: { clock: "2025-01-01T00:00:00Z" }, code: "native-unsupported", option: "clock" },
    { name: "a seed", spec: { seed: 1 }, code: "native-unsupported", option: "seed" },
    { name: "another PHP version", spec: { php: "7.4" }, code: "php-version-unavailable" },
    { name: "an extension Debian's PHP lacks", spec: { extensions: ["wp_codebox_nope"] }, code: "php-extension-unavailable" },
  ];
  for (const c of cases) {
    it(`refuses ${c.name} before boot (${c.code})`, { skip: installed ? false : "the native backend's Debian packages are missing" }, () => {
      const error = refusal(c.spec);
      assert.equal(error.code, c.code);
      assert.equal(error.data.backend, "native");
      if (c.option) assert.equal(error.data.option, c.option);
    });
  }

  it("accepts the defaults and names Debian's PHP", { skip: installed ? false : "the native backend's Debian packages are missing" }, () => {
    const resolved = createNativeBackend({ wordpress }).preflight({ clock: "real" });
    assert.equal(resolved.wordpressVersion, "6.5.5");
    assert.equal(resolved.phpVersion, nativeToolsStatus().phpVersion);
  });
});

describe("confinedCommand", () => {
  const { argv } = confinedCommand(DEFAULT_NATIVE_TOOLS, { binds: [{ source: "/srv/site", target: "/wordpress", readOnly: true }, { source: "/srv/data", target: "/var/lib/mysql", readOnly: false }], chdir: "/", limits: PHP_LIMITS }, ["/usr/bin/php", "x.php"]);

  it("sets the resource limits and a network namespace of its own", () => {
    assert.equal(argv[0], DEFAULT_NATIVE_TOOLS.prlimit);
    assert.ok(argv.includes(`--as=${PHP_LIMITS.addressSpaceBytes}`));
    assert.ok(argv.includes(`--nproc=${PHP_LIMITS.processes}`));
    assert.ok(argv.includes(`--fsize=${PHP_LIMITS.fileSizeBytes}`));
    assert.ok(argv.includes("--unshare-net") || argv.includes("--unshare-all"));
    assert.ok(argv.includes("--die-with-parent"));
  });

  it("binds only the system's programs and configuration and what it is given", () => {
    const binds: string[][] = [];
    for (let i = 0; i < argv.length; i++) if (/^--(ro-)?bind(-try)?$/.test(argv[i]!)) binds.push([argv[i]!, argv[i + 1]!, argv[i + 2]!]);
    const sources = binds.map((b) => b[1]!);
    for (const source of sources) assert.ok(source.startsWith("/usr") || source.startsWith("/etc/") || source.startsWith("/srv/"), `unexpected bind ${source}`);
    assert.deepEqual(binds.find((b) => b[1] === "/srv/site"), ["--ro-bind", "/srv/site", "/wordpress"]);
    assert.deepEqual(binds.find((b) => b[1] === "/srv/data"), ["--bind", "/srv/data", "/var/lib/mysql"]);
    for (const [flag] of binds.filter((b) => b[1]!.startsWith("/usr") || b[1]!.startsWith("/etc/"))) assert.equal(flag, "--ro-bind-try");
  });

  it("hands the environment over as the process's environment, never on the command line (ps shows it)", () => {
    const secret = "a-secret-value-93d1";
    const confined = confinedCommand(DEFAULT_NATIVE_TOOLS, { binds: [], chdir: "/", limits: PHP_LIMITS, env: { API_TOKEN: secret } }, ["/usr/bin/php"]);
    assert.ok(!confined.argv.some((a) => a.includes(secret)));
    assert.equal(confined.env.API_TOKEN, secret);
    assert.equal(confined.env.PATH, "/usr/bin:/bin");
  });

  it("drops root inside the sandbox, with no capabilities", { skip: process.getuid?.() === 0 ? false : "not run as root" }, () => {
    const at = argv.indexOf(DEFAULT_NATIVE_TOOLS.setpriv);
    assert.ok(at > argv.indexOf(DEFAULT_NATIVE_TOOLS.bwrap));
    assert.ok(argv.includes("--reuid=65534") && argv.includes("--bounding-set=-all") && argv.includes("--no-new-privs"));
  });
});

describe("confinedCommand with relays", () => {
  const relay = [{ port: 80, socket: "/run/wp-codebox-net/site.sock" }];
  const { argv } = confinedCommand(DEFAULT_NATIVE_TOOLS, { binds: [], chdir: "/", limits: PHP_LIMITS, uid: 41000, relay }, ["/usr/bin/php", "x.php"]);
  const script = argv[argv.indexOf("-c") + 1] ?? "";

  it("starts socat on 127.0.0.1 of the sandbox's own network, forwarding to the socket, then runs the command", () => {
    assert.ok(argv.includes("--unshare-net") || argv.includes("--unshare-all"));
    assert.match(script, /'TCP4-LISTEN:80,bind=127\.0\.0\.1,fork,reuseaddr' 'UNIX-CONNECT:\/run\/wp-codebox-net\/site\.sock' .*&\nexec "\$@"$/);
    assert.deepEqual(argv.slice(-2), ["/usr/bin/php", "x.php"]);
  });

  it("runs the relay as a uid of its own with only the capability to bind a low port", { skip: process.getuid?.() === 0 ? false : "not run as root" }, () => {
    assert.match(script, new RegExp(`'--reuid=${41000 + RELAY_UID_OFFSET}'.*'--bounding-set=-all,\\+net_bind_service'.*'--no-new-privs'`));
    // The command itself still drops every capability.
    assert.ok(argv.includes("--reuid=41000") && argv.includes("--bounding-set=-all"));
  });
});

describe("native backend preflight accepts", () => {
  const installed = nativeToolsStatus().ok;
  for (const [name, network] of [["outbound network", "allow"], ["an allow-list", { allowHosts: ["example.org"] }]] as const) {
    it(`a policy with ${name} (the policy proxy forwards what it allows)`, { skip: installed ? false : "the native backend's Debian packages are missing" }, () => {
      assert.doesNotThrow(() => createNativeBackend({ wordpress }).preflight({ policy: { commands: [], network } }));
    });
  }
  it("a loopback origin (the web server answers it)", { skip: installed ? false : "the native backend's Debian packages are missing" }, () => {
    const backend = createNativeBackend({ wordpress });
    assert.doesNotThrow(() => backend.preflight({ origin: "loopback" }));
  });
});
