/** VS Code never syncs documents over this many characters to extensions; their tabs still show. */
export const SYNC_LIMIT = 50 * 1024 * 1024;

const LOG_NAME = /(\.(log|out|err)|^slurm-.*\.out|\.o\d+|\.e\d+)$/i;

/** Names the extension treats as logs (the same patterns package.json adds to the log language). */
export function looksLikeLog(fileName: string): boolean {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  return LOG_NAME.test(base);
}
