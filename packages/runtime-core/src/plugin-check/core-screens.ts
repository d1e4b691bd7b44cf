/**
 * WordPress's own screens that `check` visits with the plugin active, whatever the plugin
 * registered: a plugin hooked into the front end, the login form or a core wp-admin screen only
 * runs where visitors go. Each screen is requested once before activation (its baseline) and once
 * after; only what is new after activation is the plugin's. Pure data and logic: the backend
 * makes the requests.
 */
import type { CheckSurfaceKind, PluginInventory } from "./plugin-check-report.js";
import { findingKey, findingsFromProblems, type RecordedProblem } from "./plugin-check.js";

/** Who makes a core-screen request: front-end screens are visited twice, anonymously and as a subscriber. */
export type CoreScreenActor = "anonymous" | "subscriber" | "admin";

/**
 * Sandbox-relative URLs of the seeded content and of the login screens, as the backend's seeding
 * step returns them (WordPress builds them, so they follow the site's permalink structure).
 * `register` is null when the site does not let visitors register (then that screen is skipped).
 */
export interface CoreScreenLinks {
  frontPage: string;
  post: string;
  page: string;
  category: string;
  search: string;
  notFound: string;
  feed: string;
  login: string;
  lostPassword: string;
  register: string | null;
}

/** One core screen to visit: a surface of the check. */
export interface CoreScreen {
  /** Surface id, e.g. `front-end:front-page:anonymous`, `admin-screen:/wp-admin/profile.php`. */
  id: string;
  kind: Extract<CheckSurfaceKind, "front-end" | "login-screen" | "admin-screen" | "importer">;
  /** Sandbox-relative URL requested with GET. */
  target: string;
  actor: CoreScreenActor;
  /** What it is, for messages ("The front page"). */
  what: string;
  /** Set when the screen is not visited, with the reason. */
  skippedReason?: string;
  /** The plugin's callback behind the screen (importers), for timeout and HTTP findings. */
  callback?: { file: string; line: number };
}

/** Core wp-admin screens visited as administrator, in the order a site owner meets them. */
export const CORE_ADMIN_SCREENS: readonly { path: string; what: string }[] = [
  { path: "/wp-admin/index.php", what: "The dashboard" },
  { path: "/wp-admin/profile.php", what: "The profile screen" },
  { path: "/wp-admin/users.php", what: "The users list" },
  { path: "/wp-admin/edit.php", what: "The posts list" },
  { path: "/wp-admin/post-new.php", what: "The editor of a new post" },
  { path: "/wp-admin/options-general.php", what: "The general settings" },
  { path: "/wp-admin/plugins.php", what: "The plugins screen" },
];

const FRONT_END: readonly { key: keyof CoreScreenLinks; name: string; what: string }[] = [
  { key: "frontPage", name: "front-page", what: "The front page" },
  { key: "post", name: "single-post", what: "A single post" },
  { key: "page", name: "page", what: "A page" },
  { key: "category", name: "category-archive", what: "A category archive" },
  { key: "search", name: "search-results", what: "Search results" },
  { key: "notFound", name: "not-found", what: "A missing page (404)" },
  { key: "feed", name: "rss-feed", what: "The RSS feed" },
];

const LOGIN: readonly { key: keyof CoreScreenLinks; name: string; what: string }[] = [
  { key: "login", name: "login", what: "The login form" },
  { key: "lostPassword", name: "lost-password", what: "The lost-password form" },
  { key: "register", name: "register", what: "The registration form" },
];

/**
 * The core screens of one check, in visiting order: the front end as anonymous then as subscriber,
 * the login screens anonymously, the core wp-admin screens and every importer screen the plugin
 * registered (`register_importer`) as administrator.
 * @param links - from the seeding step.
 * @param importers - the importers the plugin added (the inventory difference).
 * @returns the screens; the registration form is present but skipped when `links.register` is null.
 */
export function coreScreens(links: CoreScreenLinks, importers: PluginInventory["importers"] = []): CoreScreen[] {
  const screens: CoreScreen[] = [];
  for (const actor of ["anonymous", "subscriber"] as const) {
    for (const s of FRONT_END) {
      screens.push({ id: `front-end:${s.name}:${actor}`, kind: "front-end", target: links[s.key] ?? "", actor, what: `${s.what} (as ${actor})` });
    }
  }
  for (const s of LOGIN) {
    const url = links[s.key];
    screens.push({
      id: `login-screen:${s.name}`,
      kind: "login-screen",
      target: url ?? `/wp-login.php?action=${s.name}`,
      actor: "anonymous",
      what: s.what,
      ...(url === null ? { skippedReason: "the site does not let visitors register (users_can_register is off)" } : {}),
    });
  }
  for (const s of CORE_ADMIN_SCREENS) screens.push({ id: `admin-screen:${s.path}`, kind: "admin-screen", target: s.path, actor: "admin", what: s.what });
  for (const i of importers) {
    screens.push({ id: `importer:${i.id}`, kind: "importer", target: i.url, actor: "admin", what: `The ${i.name} importer screen`, ...(i.callback ? { callback: i.callback } : {}) });
  }
  return screens;
}

/**
 * What one screen did before the plugin was active: its HTTP status and the keys (`findingKey`)
 * of the problems the recorder logged for it. The same problem after activation is WordPress's.
 */
export interface ScreenBaseline {
  status: number;
  keys: ReadonlySet<string>;
}

/** The key (`findingKey`) of the finding a recorded problem becomes. */
export function problemKey(problem: RecordedProblem): string {
  return findingKey(findingsFromProblems([problem], "", "")[0]!);
}

/** Drops the problems a screen already had before activation (same kind, message, file and line). */
export function withoutScreenBaseline(problems: readonly RecordedProblem[], baseline: ScreenBaseline | undefined): RecordedProblem[] {
  if (!baseline) return [...problems];
  return problems.filter((p) => !baseline.keys.has(problemKey(p)));
}

/**
 * Which editor a `post-new.php` response shows: `block` for the block editor's page, `classic`
 * for the classic form, undefined when neither (a redirect, an error page).
 */
export function editorOf(html: string): "block" | "classic" | undefined {
  if (/<body[^>]*\bclass="[^"]*\bblock-editor-page\b/.test(html)) return "block";
  if (/\bid="(?:postdivrich|post-body)"/.test(html)) return "classic";
  return undefined;
}
