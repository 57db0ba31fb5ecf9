import { setSourceMapsSupport } from 'node:module';

/**
 * Stack traces point at the TypeScript sources of Hookbase's own code. Imported first by every
 * process's entry point, so that it holds for every module loaded after it. Dependencies' source
 * maps are left out: reading them all at start (what `node --enable-source-maps` does) cost about
 * 55 MB of resident memory per process on Node.js 24, for traces inside libraries only.
 */
setSourceMapsSupport(true, { nodeModules: false, generatedCode: false });
