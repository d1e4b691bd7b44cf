/**
 * `--allow-path DIR` and `--allow-network ORIGIN`: what the person running a recipe, episode
 * script or task file grants it beyond its own folder (and beyond no network). Both repeatable,
 * both command-line only: nothing in a file can widen them.
 */
import type { Command } from "commander";

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** The two flags as parsed by commander. */
export interface HostAccessFlags {
  allowPath?: string[];
  allowNetwork?: string[];
}

/** Adds `--allow-path` and `--allow-network` to `command`; returns it for chaining. */
export function addHostAccessOptions(command: Command, what = "the file"): Command {
  return command
    .option("--allow-path <dir>", `let ${what} name host paths under DIR (folder or file) besides its own folder (repeatable; symlinks are followed before checking)`, collect)
    .option("--allow-network <origin>", `let the policy of ${what} reach ORIGIN: a host (example.com, *.example.com), an origin (http://127.0.0.1:8080, matched by host), or * for every host (repeatable; default none)`, collect);
}

/**
 * The grants as Node API options (`allowPaths`, `allowNetwork`), only the ones given.
 * @returns `{ allowPaths?: string[], allowNetwork?: string[] }`.
 */
export function hostAccessGrants(flags: HostAccessFlags): { allowPaths?: string[]; allowNetwork?: string[] } {
  return { ...(flags.allowPath?.length ? { allowPaths: flags.allowPath } : {}), ...(flags.allowNetwork?.length ? { allowNetwork: flags.allowNetwork } : {}) };
}
