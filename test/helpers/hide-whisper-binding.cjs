// Preloaded with NODE_OPTIONS=--require into a server (and so into its recogniser's child): whisper.cpp's bindings
// then look uninstalled, as on a machine where npm left them out. HIDE_WHISPER_BINDINGS=fugood or napi hides one only.
const PREFIXES = { fugood: '@fugood/node-whisper-', napi: '@napi-rs/whisper' };
process.env.HIDE_PACKAGES = (process.env.HIDE_WHISPER_BINDINGS || 'fugood,napi')
  .split(',')
  .map((name) => PREFIXES[name])
  .join(',');
// Loaded as the preload itself is (no `require`, which the lint refuses): the hook beside this file.
process.getBuiltinModule('node:module').createRequire(__filename)('./hide-packages.cjs');
