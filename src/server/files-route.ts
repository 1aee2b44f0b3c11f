import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MediaflowError, paramError } from '../engine/errors.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { readFields } from './body.js';
import { FileParts, type UploadContext } from './file-parts.js';

export interface FilesRouteOptions {
  uploads: UploadContext;
  /** Runs before a request's body is read (the API key check): no byte of a refused request is stored. */
  onRequest: (request: FastifyRequest) => Promise<void>;
  baseUrl: (request: FastifyRequest) => string;
}

/**
 * `POST /files/`: keeps each file part of a multipart body as an input of its own, under
 * `{base_url}/uploads/`, and answers `{"files": [{field, name, size, content_type, url}]}` in the
 * order of the parts. Any operation or pipeline then takes such a URL as an own output (no fetch).
 * Text fields are ignored. The files are checked and kept all or none.
 */
export function registerFilesRoute(app: FastifyInstance, options: FilesRouteOptions): void {
  app.post(SERVER_PATHS.files, { onRequest: options.onRequest }, async (request) => {
    if (!request.isMultipart())
      throw new MediaflowError(
        'MF_ERR_MEDIA_TYPE',
        `Unsupported Content-Type: ${SERVER_PATHS.files}/ takes multipart/form-data with one or more file parts`,
      );
    const files = new FileParts(options.uploads, request, options.baseUrl(request));
    try {
      const { bodyIdleTimeoutMs } = options.uploads.config;
      await readFields(request, (part, stalled) => files.receive(part, stalled), bodyIdleTimeoutMs);
      files.bodyRead();
      if (files.count === 0)
        throw paramError(
          'Expected one or more file parts (Content-Disposition: form-data; name="<any>"; filename="<name>")',
        );
      await files.publish();
      return { files: files.described() };
    } catch (error) {
      await files.discard().catch((failure: unknown) => request.log.warn({ err: failure }, 'removing uploaded files'));
      throw error;
    } finally {
      await files.close();
    }
  });
}
