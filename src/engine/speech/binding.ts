/**
 * whisper.cpp's prebuilt Node binding: the CPU build for this platform, an optional dependency (package.json
 * installs it where it exists). Shared by the recogniser's child, which loads it, and the server, which only looks
 * for it.
 */
export const WHISPER_BINDING = `@fugood/node-whisper-${process.platform}-${process.arch}`;
export const WHISPER_BINDING_VERSION = '1.1.3';

/** What to run to install it. */
export const INSTALL_BINDING = `npm install ${WHISPER_BINDING}@${WHISPER_BINDING_VERSION}`;
