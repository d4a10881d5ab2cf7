/** A digest of every file dist/ is compiled from: relative paths and contents. */
export function sourcesDigest(root: string): string;
/** Whether dist/ under `root` was built, to the end, from exactly the sources there now. */
export function compiledIsCurrent(root: string): boolean;
