/**
 * `npm run import -- FILE`: loads a bundle (DESIGN §11) into the store the environment selects,
 * in one transaction. A bundle that breaks a rule is rejected whole, naming the offending path.
 */
import fs from 'node:fs/promises';
import { loadConfig } from '../config.ts';
import { BundleError, parseBundle } from '../bundle/parse.ts';
import { openRegistryStore } from '../store/open-registry.ts';

const file = process.argv[2];
if (file === undefined || file.startsWith('-')) {
  process.stderr.write('usage: npm run import -- FILE.json\n');
  process.exit(2);
}

let raw: unknown;
try {
  raw = JSON.parse(await fs.readFile(file, 'utf8'));
} catch (err) {
  process.stderr.write(`cannot read ${file}: ${(err as Error).message}\n`);
  process.exit(1);
}

let bundle;
try {
  bundle = parseBundle(raw);
} catch (err) {
  if (err instanceof BundleError) {
    process.stderr.write(`bundle rejected, nothing stored: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

const store = await openRegistryStore(loadConfig());
try {
  const counts = await store.importBundle(bundle);
  process.stdout.write(
    `imported ${Object.entries(counts)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')}\n`,
  );
} catch (err) {
  process.stderr.write(`import failed, nothing stored: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await store.close();
}
