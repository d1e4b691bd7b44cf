/**
 * Where a long-lived sandbox keeps the bulk of its evidence once it has gathered more than a
 * memory budget: large command output and bundle file contents go to files in the sandbox's own
 * directory, and the ledger keeps objects whose fields read them back when something (a bundle,
 * an observation) asks. A shared `serve` sandbox that an agent drives for thousands of calls thus
 * holds a few hundred bytes per call in memory instead of everything each call printed.
 *
 * Nothing changes for a one-shot run: below the budget every value stays in memory.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ArtifactFile, ExecutionResult } from "@wp-codebox/runtime-core";

/** Default budget of evidence kept in memory per sandbox, in bytes (64 MiB). */
export const DEFAULT_EVIDENCE_MEMORY_BYTES = 64 * 1024 * 1024;

/** Values smaller than this (bytes) always stay in memory: spilling them would save nothing. */
const SPILL_MIN_BYTES = 4 * 1024;

type Spilled = { file: string; kind: "text" | "bytes" | "json" };

/**
 * A folder of spilled values and the count of bytes still in memory.
 * Files are named by a counter; they live as long as the sandbox directory (or until `clear`).
 */
export class EvidenceSpill {
  private counter = 0;
  private made = false;
  /** Bytes of values the ledger holds in memory (an estimate: string length, byte length). */
  private held = 0;
  /** Files this store returned from `keepFile` (counted or spilled once). */
  private kept = new WeakSet<ArtifactFile>();

  /**
   * @param dir - folder for spilled values (created on first use), inside the sandbox directory;
   *   undefined keeps everything in memory.
   * @param budgetBytes - bytes held in memory before values start to spill (0: spill at once).
   */
  constructor(
    private readonly dir: string | undefined,
    private readonly budgetBytes: number = DEFAULT_EVIDENCE_MEMORY_BYTES,
  ) {}

  /** Bytes of evidence held in memory now (estimate). */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * A result to keep: the same object while the budget allows, else a copy whose large
   * `stdout`, `stderr` and `json` read from files (each read returns equal content).
   */
  keepResult(result: ExecutionResult): ExecutionResult {
    // Nowhere to spill to: nothing to measure either (no JSON.stringify per command).
    if (this.dir === undefined) return result;
    const fields: [keyof ExecutionResult, "text" | "json"][] = [
      ["stdout", "text"],
      ["stderr", "text"],
      ["json", "json"],
    ];
    let copy: ExecutionResult | undefined;
    for (const [field, kind] of fields) {
      const value = result[field];
      if (value === undefined) continue;
      const text = kind === "json" ? JSON.stringify(value) : (value as string);
      if (!this.shouldSpill(text.length)) {
        this.held += text.length;
        continue;
      }
      copy ??= { ...result };
      defineSpilled(copy, field, this.write(text, kind));
    }
    return copy ?? result;
  }

  /**
   * A bundle file to keep: itself while the budget allows, else one whose `content` reads from a
   * file. Keeping a file this store already kept returns it unchanged.
   */
  keepFile(file: ArtifactFile): ArtifactFile {
    if (this.dir === undefined || this.kept.has(file)) return file;
    const size = contentSize(file.content);
    if (!this.shouldSpill(size)) {
      this.held += size;
      this.kept.add(file);
      return file;
    }
    const copy = { ...file };
    defineSpilled(copy, "content", typeof file.content === "string" ? this.write(file.content, "text") : this.write(file.content, "bytes"));
    this.kept.add(copy);
    return copy;
  }

  /**
   * `file` (one this store kept) with `more` appended: a `.jsonl` file written across commands. A
   * spilled file is appended to on disk, so a long session does not re-read and re-write it at
   * every command.
   */
  appendToFile(file: ArtifactFile, more: string): ArtifactFile {
    const spilled = spilledOf(file, "content");
    if (spilled && spilled.kind === "text") {
      appendFileSync(spilled.file, more);
      return file;
    }
    if (this.kept.has(file)) this.held -= contentSize(file.content);
    return this.keepFile({ ...file, content: `${String(file.content)}${more}` });
  }

  /** Forgets every spilled value (the ledger forgot what pointed at them). */
  clear(): void {
    this.held = 0;
    this.kept = new WeakSet();
    if (this.dir && this.made) rmSync(this.dir, { recursive: true, force: true });
    this.made = false;
  }

  private shouldSpill(size: number): boolean {
    return this.dir !== undefined && size >= SPILL_MIN_BYTES && this.held + size > this.budgetBytes;
  }

  private write(content: string | Uint8Array, kind: Spilled["kind"]): Spilled {
    if (!this.made) {
      mkdirSync(this.dir!, { recursive: true });
      this.made = true;
    }
    const file = join(this.dir!, String(++this.counter));
    writeFileSync(file, content);
    return { file, kind };
  }
}

function contentSize(content: ArtifactFile["content"]): number {
  return typeof content === "string" ? content.length : content.byteLength;
}

const SPILLED = Symbol("wp-codebox.spilled");

/** Makes `target[field]` an enumerable getter that reads the spilled value (spread and JSON.stringify see plain values). */
function defineSpilled(target: object, field: string, spilled: Spilled): void {
  Object.defineProperty(target, field, {
    enumerable: true,
    configurable: true,
    get: () => {
      if (spilled.kind === "bytes") return new Uint8Array(readFileSync(spilled.file));
      const text = readFileSync(spilled.file, "utf8");
      return spilled.kind === "json" ? (JSON.parse(text) as unknown) : text;
    },
  });
  let marks = (target as Record<symbol, Record<string, Spilled> | undefined>)[SPILLED];
  if (!marks) {
    marks = {};
    // Not enumerable: a spread copy reads the values and is no longer spilled.
    Object.defineProperty(target, SPILLED, { value: marks, enumerable: false });
  }
  marks[field] = spilled;
}

/** Where `target[field]` was spilled, if it was. */
function spilledOf(target: object, field: string): Spilled | undefined {
  return (target as Record<symbol, Record<string, Spilled> | undefined>)[SPILLED]?.[field];
}
