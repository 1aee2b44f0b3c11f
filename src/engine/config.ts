import { Unreadable, type Kind } from './config-kinds.js';
import { MediaflowError } from './errors.js';
import { SETTINGS_TABLE, type Setting } from './config-table.js';

export { DEFAULT_MAX_PIXELS } from './config-table.js';

type Table = typeof SETTINGS_TABLE;
type ValueOf<E> = E extends { kind: Kind<infer T> } ? T : never;
type WithDefault = { [K in keyof Table as Table[K] extends { default: unknown } ? K : never]: ValueOf<Table[K]> };
type Unset = { [K in keyof Table as Table[K] extends { default: unknown } ? never : K]?: ValueOf<Table[K]> };

/** mediaflow's settings, as config-table.ts declares them: those without a default may be unset. */
export type Config = { [K in keyof (WithDefault & Unset)]: (WithDefault & Unset)[K] };

/** A setting of the table with its key in `Config`. */
export type KeyedSetting = Setting & { key: keyof Config };

/** The table as a list, in its order (the CLI's help, the docs' table). */
export const SETTINGS: readonly KeyedSetting[] = Object.entries(SETTINGS_TABLE).map(([key, setting]) => ({
  key: key as keyof Config,
  ...setting,
}));

/** Every API key configured (MEDIAFLOW_API_KEY and MEDIAFLOW_API_KEYS), once each. */
export const apiKeysOf = (config: Pick<Config, 'apiKey' | 'apiKeys'>): string[] => [
  ...new Set([...(config.apiKey ? [config.apiKey] : []), ...config.apiKeys]),
];

/**
 * Reads one raw value (from the environment or a flag) as its setting's kind; a flag without a value is already
 * a boolean. What cannot be read is a 400 naming the variable and the flag.
 */
export function parseSetting(setting: KeyedSetting, raw: string | boolean): Config[keyof Config] {
  if (typeof raw === 'boolean') return raw;
  try {
    return (setting.kind as Kind<Config[keyof Config]>).read(raw.trim());
  } catch (error) {
    if (!(error instanceof Unreadable)) throw error;
    return failed(setting, error.got ?? raw, error.expected);
  }
}

const copy = <T>(value: T): T => (Array.isArray(value) ? ([...value] as T) : value);

function failed(setting: KeyedSetting, got: string, expected: string): never {
  throw new MediaflowError(
    'MF_ERR_PARAM',
    `Expected ${setting.env} (--${setting.flag}) to be ${expected}, got \`${got}\``,
  );
}

/**
 * The configuration from defaults, then the environment, then explicit overrides (flags win).
 * Unset or empty variables keep their default.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<keyof Config, string | boolean>> = {},
): Config {
  const config: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const fromEnv = env[setting.env];
    const raw = overrides[setting.key] ?? (fromEnv === undefined || fromEnv === '' ? undefined : fromEnv);
    // A list default is copied: the configuration is the caller's to change.
    const value = raw !== undefined ? parseSetting(setting, raw) : copy(setting.default);
    if (value === undefined) continue;
    const kind = setting.kind as Kind<unknown>;
    config[setting.key] = kind.settle ? kind.settle(value) : value;
  }
  return config as Config;
}
