/** The subgraph SDL: every file of schema/, parsed once (one file per domain area). */
import fs from 'node:fs';
import path from 'node:path';
import { parse, type DocumentNode } from 'graphql';

const SCHEMA_DIR = path.join(import.meta.dirname, '..', '..', 'schema');

/** The SDL of schema/*.graphql concatenated in file-name order, parsed. */
export function loadTypeDefs(dir: string = SCHEMA_DIR): DocumentNode {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort();
  return parse(files.map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n'));
}
