/**
 * The sandbox's state over time: the clean database captured right after boot (what `reset()`
 * returns to) and the snapshots taken so far (bundled on request). The work itself is in
 * `runtime-state.ts`. Call these while no PHP request runs (the runtime holds its exclusive lock,
 * or is still booting).
 */
import type { WordPressRuntimeSnapshot } from "@wp-codebox/runtime-core";
import { applySnapshot, captureSnapshot, readDatabase, resetContent, type RuntimeStateHost } from "./runtime-state.js";

export class RuntimeSnapshots {
  /** The database right after boot (inputs activated, site options applied): what `reset()` restores. */
  private cleanDatabase: Uint8Array | undefined;
  private readonly taken = new Map<string, WordPressRuntimeSnapshot>();

  /** @param stateHost - the sandbox's folders, versions and a PHP runner (the current primary worker). */
  constructor(private readonly stateHost: () => RuntimeStateHost) {}

  /** Records the current database as the clean state (once, right after boot). */
  markClean(): void {
    this.cleanDatabase = readDatabase(this.stateHost());
  }

  /** Captures a `wp-codebox/wordpress-runtime-snapshot/v1` snapshot of the current state. */
  capture(): Promise<WordPressRuntimeSnapshot> {
    return captureSnapshot(this.stateHost());
  }

  /** Keeps a captured snapshot for the bundle (`includeRuntimeSnapshotBundles`). */
  remember(snapshot: WordPressRuntimeSnapshot): void {
    this.taken.set(snapshot.id, snapshot);
  }

  /**
   * Makes the state equal to a verified snapshot.
   * @throws `snapshot-incompatible`.
   */
  apply(snapshot: WordPressRuntimeSnapshot): void {
    applySnapshot(this.stateHost(), snapshot);
  }

  /** Rebuilds wp-content and the database as they were right after boot. */
  resetToClean(): void {
    resetContent(this.stateHost(), this.cleanDatabase!);
  }

  /** Every snapshot taken and not forgotten, in the order taken. */
  all(): Iterable<WordPressRuntimeSnapshot> {
    return this.taken.values();
  }

  /** Forgets the snapshots taken (the clean state stays). */
  forget(): void {
    this.taken.clear();
  }
}
