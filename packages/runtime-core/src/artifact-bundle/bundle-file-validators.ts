/**
 * Extension point for `verifyArtifactBundle`: a feature that adds a file kind to bundles (e.g. the
 * episode trace, kind `runtime-episode-trace`) registers a validator for it, and every bundle file
 * of that kind is checked by it during verification.
 */

/** What a validator sees. `readFile` reads any bundle file (bundle-relative path) as bytes. */
export interface BundleFileValidationContext {
  directory: string;
  path: string;
  kind: string;
  bytes: Uint8Array;
  text: string;
  readFile(path: string): Promise<Uint8Array>;
}

/** A problem found by a validator; `code` defaults to `file-invalid`, `path` to the file's path. */
export interface BundleFileIssue {
  code?: string;
  path?: string;
  message: string;
}

export type BundleFileValidator = (context: BundleFileValidationContext) => BundleFileIssue[] | Promise<BundleFileIssue[]>;

const validators = new Map<string, BundleFileValidator>();

/**
 * Registers (or replaces) the validator for a file kind.
 * @returns a function that unregisters it.
 * @example registerBundleFileValidator("runtime-episode-trace", ({ text }) => validateTraceText(text))
 */
export function registerBundleFileValidator(kind: string, validator: BundleFileValidator): () => void {
  validators.set(kind, validator);
  return () => {
    if (validators.get(kind) === validator) validators.delete(kind);
  };
}

/** The validator registered for `kind`, if any. */
export function getBundleFileValidator(kind: string): BundleFileValidator | undefined {
  return validators.get(kind);
}
