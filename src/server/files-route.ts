import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MediaflowError, paramError } from '../engine/errors.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { readFields } from './body.js';
import { FileParts, type UploadContext } from './file-parts.js';
import { handlerValidates } from './validation.js';
import { errorRefs } from './openapi/error-responses.js';
import { apiKeySecurity, DOCUMENTED_WITH_SLASH, json, SAMPLE_BASE, SAMPLE_ID, type Json } from './openapi/shared.js';

export interface FilesRouteOptions {
  uploads: UploadContext;
  /** Runs before a request's body is read (the API key check): no byte of a refused request is stored. */
  onRequest: (request: FastifyRequest) => Promise<void>;
  baseUrl: (request: FastifyRequest) => string;
  /** Whether the server has an API key: the route's `security`. */
  secured: boolean;
}

/** One file kept, as the answer lists it. */
const FILE: Json = {
  type: 'object',
  required: ['field', 'name', 'size', 'content_type', 'url'],
  properties: {
    field: { type: 'string', description: "The part's name" },
    name: { type: 'string', description: 'The file name the client gave, without folders' },
    size: { type: 'integer', description: 'Bytes stored' },
    content_type: { type: 'string', description: 'The media type the part declared' },
    url: {
      type: 'string',
      format: 'uri',
      description:
        '{base_url}/uploads/<uuid>_upload.<ext>: pass it in any URL field of any operation or pipeline; read as ' +
        "an own output (no fetch), kept for MEDIAFLOW_RETENTION. With S3 storage it names the bucket's object",
    },
  },
};

/** The route's schema: a multipart body of file parts, the files kept. */
const filesDocs = (secured: boolean) => ({
  operationId: 'files',
  summary: 'Keep files as inputs: each file part is stored, and its URL works in any URL field',
  description:
    'One or more file parts, under any names (text fields are ignored). Each file is held to ' +
    'MEDIAFLOW_MAX_INPUT_BYTES and the request to MEDIAFLOW_MAX_REQUEST_BYTES (413), streamed to disk, and ' +
    'probed as a download is (not media: 422); the files are kept all or none. Also answered at `/files`.',
  tags: ['server'],
  ...apiKeySecurity(secured),
  body: {
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          description: 'Any part names; every part with a file name is a file',
          additionalProperties: { contentMediaType: 'application/octet-stream' },
        },
      },
    },
  },
  response: {
    200: {
      description: 'Every file stored, in the order of the parts',
      content: json({
        type: 'object',
        required: ['files'],
        properties: { files: { type: 'array', items: FILE } },
        examples: [
          {
            files: [
              {
                field: 'video',
                name: 'talk.mp4',
                size: 1048576,
                content_type: 'video/mp4',
                url: `${SAMPLE_BASE}/uploads/${SAMPLE_ID}_upload.mp4`,
              },
            ],
          },
        ],
      }),
    },
    ...errorRefs([
      'MF_ERR_PARAM',
      'MF_ERR_BAD_REQUEST',
      'MF_ERR_AUTH',
      'MF_ERR_REQUEST_TIMEOUT',
      'MF_ERR_TOO_LARGE',
      'MF_ERR_MEDIA_TYPE',
      'MF_ERR_MEDIA',
      'MF_ERR_BUSY',
      'MF_ERR_STORAGE',
    ]),
  },
});

/**
 * `POST /files/`: keeps each file part of a multipart body as an input of its own, under
 * `{base_url}/uploads/`, and answers `{"files": [{field, name, size, content_type, url}]}` in the
 * order of the parts. Any operation or pipeline then takes such a URL as an own output (no fetch).
 * Text fields are ignored. The files are checked and kept all or none.
 */
export function registerFilesRoute(app: FastifyInstance, options: FilesRouteOptions): void {
  app.post(
    SERVER_PATHS.files,
    // The parts are read as they arrive (file-parts.ts), never parsed into a body Fastify could check.
    {
      onRequest: options.onRequest,
      schema: filesDocs(options.secured),
      validatorCompiler: handlerValidates,
      config: DOCUMENTED_WITH_SLASH,
    },
    async (request) => {
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
        await files
          .discard()
          .catch((failure: unknown) => request.log.warn({ err: failure }, 'removing uploaded files'));
        throw error;
      } finally {
        await files.close();
      }
    },
  );
}
