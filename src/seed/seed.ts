/** First-start seeding: the demo bundle goes into an empty registry, and only then. */
import type { RegistryStore } from '../store/registry-port.ts';
import { parseBundle } from '../store/bundle.ts';
import { demoBundle } from './demo-bundle.ts';

export async function seedDemoIfEmpty(store: RegistryStore): Promise<boolean> {
  if (!(await store.isEmpty())) return false;
  await store.importBundle(parseBundle(demoBundle()));
  return true;
}
