/**
 * The console's files for tests that serve or open it: built by `npm install` (prepare) and
 * `npm start`; rebuilt here when a source is newer, as `npm start` would.
 */
import { execFileSync } from 'node:child_process';

export function buildConsoleIfStale(): void {
  execFileSync(process.execPath, ['console/build.ts', '--if-stale'], { stdio: 'inherit' });
}
