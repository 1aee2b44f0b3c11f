import { errorRefs } from './error-responses.js';
import { apiKeySecurity, json, SAMPLE_BASE, SAMPLE_ID, type Json } from './shared.js';

/** `POST /files/`: files kept as inputs of their own (docs/files.md), whose URLs any operation takes. */
export function filesRoute(secured: boolean): Json {
  const file: Json = {
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
  return {
    '/files/': {
      post: {
        operationId: 'files',
        summary: 'Keep files as inputs: each file part is stored, and its URL works in any URL field',
        description:
          'One or more file parts, under any names (text fields are ignored). Each file is held to ' +
          'MEDIAFLOW_MAX_INPUT_BYTES and the request to MEDIAFLOW_MAX_REQUEST_BYTES (413), streamed to disk, and ' +
          'probed as a download is (not media: 422); the files are kept all or none. Also answered at `/files`.',
        tags: ['server'],
        ...apiKeySecurity(secured),
        requestBody: {
          required: true,
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
        responses: {
          '200': {
            description: 'Every file stored, in the order of the parts',
            content: json({
              type: 'object',
              required: ['files'],
              properties: { files: { type: 'array', items: file } },
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
      },
    },
  };
}
