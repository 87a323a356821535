import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { traceContract } from './trace-contract.ts';

traceContract('duckdb', () => DuckDbTraceStore.open(':memory:'));
