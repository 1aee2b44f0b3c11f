// Preloaded with NODE_OPTIONS=--require into a process (and its children): the packages HIDE_PACKAGES names (a comma
// list of name prefixes) then look uninstalled, as on a machine where npm left them out.
const Module = process.getBuiltinModule('node:module');

const hidden = (process.env.HIDE_PACKAGES || '').split(',').filter(Boolean);

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (hidden.some((prefix) => request.startsWith(prefix))) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
