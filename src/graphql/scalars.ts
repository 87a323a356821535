/** The custom scalars: JSON (any JSON value) and Int64 (a safe integer beyond GraphQL's 32 bits). */
import { GraphQLError, GraphQLScalarType, Kind, valueFromASTUntyped, type ValueNode } from 'graphql';

/** Free-form JSON, passed through as is in both directions. */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});

function safeInteger(value: unknown): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n))
    throw new GraphQLError(`Int64 cannot represent ${String(value)}`);
  return n;
}

/** An integer that JavaScript represents exactly (|n| < 2^53), as a JSON number. */
export const Int64Scalar = new GraphQLScalarType({
  name: 'Int64',
  serialize: safeInteger,
  parseValue: safeInteger,
  parseLiteral: (ast: ValueNode) => {
    if (ast.kind !== Kind.INT) throw new GraphQLError('Int64 must be an integer literal', { nodes: ast });
    return safeInteger(ast.value);
  },
});
