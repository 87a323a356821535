import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { registryContract } from './registry-contract.ts';

registryContract('sqlite', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-contract-'));
  return new SqliteRegistryStore(path.join(dir, 'registry.sqlite'));
});
