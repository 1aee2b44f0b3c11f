import { readFileSync } from 'node:fs';
import type { BindingSetting } from '../../config-table.js';
import { packageResolves } from '../../exec/optional-packages.js';

/**
 * whisper.cpp's prebuilt Node bindings, and which one recognises here (MEDIAFLOW_WHISPER_BINDING). Shared by the
 * recogniser's child, which loads the chosen one, and the server, which only looks for it (nothing native is loaded
 * in the server's process).
 *
 * - `fugood`: @fugood's CPU build for this platform, an optional dependency (installed where npm has it): 2.8 MB,
 *   no AVX code, so slow (docs/transcription.md, "Measured").
 * - `napi`: @napi-rs/whisper, whisper.cpp built with AVX2: about 25 times faster, but 26 MB, more than the production
 *   install can hold, so installed by hand beside it (and by `npm install`, as a dev dependency).
 * - `auto` (the default): napi where it is installed and the CPU has what its build needs, else fugood.
 */
export type BindingName = Exclude<BindingSetting, 'auto'>;

const FUGOOD = `@fugood/node-whisper-${process.platform}-${process.arch}`;
/** napi-rs names its builds by platform; these are the ones @napi-rs/whisper 0.0.4 publishes. */
const NAPI_BUILDS: Record<string, string> = {
  'linux-x64': 'linux-x64-gnu',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
};
const napiBuild = NAPI_BUILDS[`${process.platform}-${process.arch}`];

interface Binding {
  /** What `npm install` takes, version included. */
  package: string;
  /** The packages that must resolve for it to load: the wrapper and its native build for this platform. */
  packages: string[];
  /**
   * x86 instructions its whisper.cpp code runs without checking for them first, as in /proc/cpuinfo's flags: a CPU
   * without them would kill the child with SIGILL, so such a CPU never gets this binding.
   */
  cpuFlags: string[];
}

export const BINDINGS: Record<BindingName, Binding> = {
  fugood: { package: `${FUGOOD}@1.1.3`, packages: [FUGOOD], cpuFlags: [] },
  napi: {
    package: '@napi-rs/whisper@0.0.4',
    packages: napiBuild ? ['@napi-rs/whisper', `@napi-rs/whisper-${napiBuild}`] : ['@napi-rs/whisper'],
    // Built with GGML_NATIVE on an AVX-512 machine; objdump finds AVX2, FMA and F16C code and BMI2's shlx in ggml
    // and whisper.cpp, no AVX-512 (that is in its ffmpeg and dav1d, which pick their code at run time).
    cpuFlags: process.arch === 'x64' ? ['avx2', 'fma', 'f16c', 'bmi2'] : [],
  },
};

/** What to run to install a binding. */
export const installCommand = (name: BindingName) => `npm install ${BINDINGS[name].package}`;

let cpuFlags: Set<string> | null | undefined;

/** The CPU's flags (Linux), or null where /proc/cpuinfo does not say. */
function cpu(): Set<string> | null {
  if (cpuFlags === undefined) {
    try {
      const line = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1];
      cpuFlags = line === undefined ? null : new Set(line.trim().split(/\s+/));
    } catch {
      cpuFlags = null;
    }
  }
  return cpuFlags;
}

const problems = new Map<BindingName, string | null>();

/** Why a binding cannot run here (not installed, or a CPU without what its build needs), or null: once a process. */
export function bindingProblem(name: BindingName): string | null {
  if (!problems.has(name)) {
    const binding = BINDINGS[name];
    let problem: string | null = null;
    if (!packageResolves(...binding.packages)) {
      problem = `whisper.cpp's binding is not installed (${installCommand(name)})`;
    } else if (binding.cpuFlags.length > 0) {
      const flags = cpu();
      const lacking = flags ? binding.cpuFlags.filter((flag) => !flags.has(flag)) : binding.cpuFlags;
      if (lacking.length > 0) {
        problem =
          `whisper.cpp's binding ${binding.package} needs a CPU with ${binding.cpuFlags.join(', ')}, and this one ` +
          `${flags ? `lacks ${lacking.join(', ')}` : 'does not say whether it has them (no /proc/cpuinfo)'}` +
          ' (MEDIAFLOW_WHISPER_BINDING=fugood uses the CPU build)';
      }
    }
    problems.set(name, problem);
  }
  return problems.get(name)!;
}

/**
 * The binding a setting gives here, or why none: `auto` takes napi where it can run, else fugood; a binding named
 * explicitly is that one or nothing.
 */
export function chooseBinding(setting: BindingSetting): { binding: BindingName } | { error: string } {
  if (setting === 'auto' && !bindingProblem('napi')) return { binding: 'napi' };
  const name = setting === 'auto' ? 'fugood' : setting;
  const problem = bindingProblem(name);
  return problem ? { error: problem } : { binding: name };
}
