import type { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCodeModule from 'ajv/dist/standalone/index.js';
import { build, type Plugin } from 'esbuild';
import { repoRoot } from './paths.js';

// ajv's standalone module is CommonJS; its default export arrives as the module object under NodeNext.
const standaloneCode = ((standaloneCodeModule as unknown as { default?: unknown }).default ?? standaloneCodeModule) as (
  ajv: Ajv2020,
  exports?: Record<string, string> | ReturnType<Ajv2020['compile']>,
) => string;

/**
 * ajv's standalone ESM code for `exports` (one compiled function, or export names mapped to
 * schema refs), with ajv's runtime helpers (e.g. ucs2length for maxLength) bundled in so the
 * result needs no ajv at run time. `prelude` is prepended (imports the code refers to), and
 * `plugins` decide how those imports are written.
 */
export async function standaloneModule(
  ajv: Ajv2020,
  exports: Record<string, string> | ReturnType<Ajv2020['compile']>,
  options: { sourcefile: string; prelude?: string; plugins?: Plugin[] },
): Promise<string> {
  const bundled = await build({
    stdin: {
      contents: `${options.prelude ?? ''}${standaloneCode(ajv, exports)}`,
      resolveDir: repoRoot,
      sourcefile: options.sourcefile,
      loader: 'js',
    },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2020',
    charset: 'utf8',
    legalComments: 'none',
    plugins: options.plugins ?? [],
    logLevel: 'silent',
  });
  return bundled.outputFiles[0]!.text;
}
