import { createRequire } from 'node:module';

/**
 * Whether a package resolves from here, and each package after it from the one before: an optional package with its
 * native build (a whisper.cpp binding, koffi, sherpa-onnx-node), found without loading it.
 */
export function packageResolves(...packages: string[]): boolean {
  try {
    let require = createRequire(import.meta.url);
    for (const name of packages) require = createRequire(require.resolve(name));
    return true;
  } catch {
    return false;
  }
}
