// Preloaded with NODE_OPTIONS=--require into a server (and so into its recogniser's child): whisper.cpp's binding then
// looks uninstalled, as on a machine where npm left the optional dependency out.
const Module = process.getBuiltinModule('node:module');

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request.startsWith('@fugood/node-whisper-')) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
