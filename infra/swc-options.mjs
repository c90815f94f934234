// How TypeScript becomes JavaScript here, for the build (infra/build.mjs) and for jest
// (jest.config.js) alike: swc strips the types and checks none (`npm run check` does); the
// options mirror tsconfig.base.json's target and module semantics (ES2022, ES modules,
// `verbatimModuleSyntax`, class fields defined as the standard says).
export const swcOptions = {
  jsc: {
    parser: { syntax: 'typescript' },
    target: 'es2022',
    transform: { useDefineForClassFields: true, verbatimModuleSyntax: true },
  },
  module: { type: 'es6' },
};
