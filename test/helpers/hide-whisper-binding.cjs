// Preloaded with NODE_OPTIONS=--require into a server (and so into its recogniser's child): whisper.cpp's bindings
// then look uninstalled, as on a machine where npm left them out. HIDE_WHISPER_BINDINGS=fugood or napi hides one only.
const Module = process.getBuiltinModule('node:module');

const PREFIXES = { fugood: '@fugood/node-whisper-', napi: '@napi-rs/whisper' };
const hidden = (process.env.HIDE_WHISPER_BINDINGS || 'fugood,napi').split(',').map((name) => PREFIXES[name]);

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (hidden.some((prefix) => request.startsWith(prefix))) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
