/**
 * One artifact file, read back by its bundle-relative path without writing a bundle: what a client
 * needs to show a screenshot a command just took, at the cost of that one file.
 */
import { ARTIFACT_READ_CAP_BYTES } from "../defaults.js";
import { WpCodeboxError } from "../errors.js";
import { createRedactor } from "../redaction.js";
import type { ArtifactFile, RuntimeArtifacts } from "../runtime.js";
import { maskBinaryContent } from "./binary-mask.js";
import { bundlePathProblem, isTextContentType } from "./bundle-layout.js";

/** An artifact file as `readArtifactFile` returns it: the content as bytes, and their count. */
export interface ArtifactFileRead extends ArtifactFile {
  content: Uint8Array;
  /** `content.byteLength`. */
  bytes: number;
}

/** Options of `readArtifactFile`. */
export interface ArtifactReadOptions {
  /** Largest content returned, in bytes; default and ceiling `ARTIFACT_READ_CAP_BYTES`. */
  maxBytes?: number;
}

/**
 * The file at bundle-relative `path` among `artifacts.files` (what `collectArtifacts()` gathered),
 * with the content the bundle writer would store: text redacted of `artifacts.secrets` and
 * credential patterns, binary content masked byte for byte (`maskBinaryContent`). Only the runtime's own files are reachable: the files
 * the bundle writer makes (manifest, metadata, commands.jsonl, …) and any other path are not.
 * @param path - e.g. `files/browser/screenshot-saved.png` (as in `ExecutionResult.artifactRefs`).
 * @throws WpCodeboxError `artifact-not-found` when `path` is unsafe (absolute, `..`, …) or names no
 *   file of the runtime; `artifact-too-large` when the content is over `maxBytes`
 *   (`data: { path, bytes, maxBytes }`).
 * @example readArtifactFile(await runtime.collectArtifacts(), "files/browser/screenshot-saved.png").content // PNG bytes
 */
export function readArtifactFile(artifacts: RuntimeArtifacts, path: string, options: ArtifactReadOptions = {}): ArtifactFileRead {
  const maxBytes = Math.min(options.maxBytes ?? ARTIFACT_READ_CAP_BYTES, ARTIFACT_READ_CAP_BYTES);
  const problem = bundlePathProblem(path);
  const file = problem ? undefined : artifacts.files.find((f) => f.path === path);
  if (!file) {
    throw new WpCodeboxError(
      "artifact-not-found",
      `No artifact file ${JSON.stringify(path)}${problem ? ` (the path ${problem})` : ""}: give a bundle-relative path a result listed in artifactRefs, e.g. files/browser/screenshot-<name>.png.`,
      { path: String(path) },
    );
  }
  const content = redacted(file, artifacts.secrets ?? []);
  if (content.byteLength > maxBytes) {
    throw new WpCodeboxError("artifact-too-large", `Artifact ${path} is ${content.byteLength} bytes, over the ${maxBytes}-byte limit of a single read: collect the bundle to get it.`, {
      path,
      bytes: content.byteLength,
      maxBytes,
    });
  }
  return { path: file.path, kind: file.kind, contentType: file.contentType, content, bytes: content.byteLength };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The content as bytes, passed through the redactor as the bundle writer does. */
function redacted(file: ArtifactFile, secrets: readonly string[]): Uint8Array {
  if (typeof file.content === "string") return encoder.encode(createRedactor(secrets).redact(file.content));
  if (!isTextContentType(file.contentType)) return maskBinaryContent(file.content, createRedactor(secrets));
  return encoder.encode(createRedactor(secrets).redact(decoder.decode(file.content)));
}
