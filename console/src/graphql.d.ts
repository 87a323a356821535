/** GraphQL documents (queries/*.graphql) are bundled as their text (console/build.ts). */
declare module '*.graphql' {
  const text: string;
  export default text;
}
