import { mediaTypeOf } from '../../engine/storage/media-types.js';
import { possibleOutputs } from '../../engine/plugins/plugin-check.js';
import { outputPaths, type PluginDefinition } from '../../engine/contract/plugin.js';
import type { Registry } from '../../engine/plugins/registry.js';
import { errorContent } from './error-responses.js';
import { parameterRef, SAMPLE_BASE, SAMPLE_ID, type Json } from './shared.js';

/**
 * The outputs under `/uploads/`: their paths, with the media types (from the one table,
 * src/engine/storage/media-types.ts) of what the registry's operations write, and Range requests.
 */

/** The output paths (with `{id}`) a plugin may answer with (see possibleOutputs). */
const possiblePaths = (plugin: PluginDefinition): string[] => [
  ...new Set(possibleOutputs(plugin).flatMap(outputPaths)),
];

/**
 * The media types of `/uploads/{file}` (outputs directly under uploads) and `/uploads/{dir}/{file}`
 * (outputs in a folder of their own; pipeline results, `<run>/<result>.<ext>`, may be any output's type).
 */
function uploadMediaTypes(registry: Registry): { file: string[]; dirFile: string[] } {
  const file = new Set<string>();
  const dirFile = new Set<string>();
  for (const plugin of registry.list()) {
    for (const output of possiblePaths(plugin)) {
      const type = mediaTypeOf(output);
      if (!output.includes('/')) file.add(type);
      dirFile.add(type);
    }
  }
  return { file: [...file].sort(), dirFile: [...dirFile].sort() };
}

/** `GET /uploads/{file}` and `GET /uploads/{dir}/{file}`: the outputs, with their media types and Range requests. */
export function uploadRoutes(registry: Registry): Json {
  const types = uploadMediaTypes(registry);
  // Outputs are bytes of their media type; OpenAPI 3.1 describes such a body by its media type alone.
  const bytes = (mediaTypes: string[]) => Object.fromEntries(mediaTypes.map((type) => [type, {}]));
  const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
  const fileParameter = (description: string) => ({
    name: 'file',
    in: 'path',
    required: true,
    description,
    schema: { type: 'string', pattern: '^[A-Za-z0-9._-]+$' },
  });
  const route = (operationId: string, parameters: Json[], mediaTypes: string[], examplePath: string): Json => ({
    get: {
      operationId,
      summary: 'An output, by the URL an operation, a pipeline or a job answered with',
      description:
        `For example \`${SAMPLE_BASE}/uploads/${examplePath}\`. Open without the API key (its name holds a ` +
        `random UUID). Range requests are answered with 206 Partial Content; \`If-None-Match\` and ` +
        `\`If-Modified-Since\` with 304. Text types (subtitles) come with \`; charset=utf-8\`. Outputs are ` +
        `deleted after MEDIAFLOW_RETENTION.`,
      tags: ['server'],
      parameters: [...parameters, parameterRef('Range')],
      responses: {
        '200': {
          description: 'The whole file',
          headers: {
            'Accept-Ranges': header('`bytes`', { type: 'string', enum: ['bytes'] }),
            ETag: header('A validator for If-None-Match and If-Range'),
            'Last-Modified': header('When the output was written'),
          },
          content: bytes(mediaTypes),
        },
        '206': {
          description: 'Partial Content: the byte range the `Range` header asked for',
          headers: {
            'Content-Range': header('`bytes <first>-<last>/<size>`', {
              type: 'string',
              pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$',
            }),
            'Accept-Ranges': header('`bytes`', { type: 'string', enum: ['bytes'] }),
          },
          content: bytes(mediaTypes),
        },
        '304': { description: 'Not Modified: the client holds this version (If-None-Match, If-Modified-Since)' },
        '404': { description: 'No such output (or it expired)', content: errorContent },
        '416': { description: 'Range Not Satisfiable: the range lies outside the file', content: errorContent },
      },
    },
  });
  return {
    '/uploads/{file}': route(
      'upload',
      [fileParameter("The output's name, such as `<id>_cropped.jpg` or `<id>_merged.mp4`")],
      types.file,
      `${SAMPLE_ID}_cropped.jpg`,
    ),
    '/uploads/{dir}/{file}': route(
      'uploadInFolder',
      [
        {
          name: 'dir',
          in: 'path',
          required: true,
          description: "The output's folder: the request's (or pipeline run's) random UUID",
          schema: { type: 'string', pattern: '^[A-Za-z0-9._-]+$' },
        },
        fileParameter(
          "The output's name in its folder, such as `merged_output.mp3` or a pipeline result's `<result>.<ext>`",
        ),
      ],
      types.dirFile,
      `${SAMPLE_ID}/merged_output.mp3`,
    ),
  };
}

/** The component parameter of a Range request. */
export function uploadParameters(): Json {
  return {
    Range: {
      name: 'Range',
      in: 'header',
      required: false,
      description: 'Bytes to read, such as `bytes=0-1023`; the answer is then 206 Partial Content',
      schema: { type: 'string', pattern: '^bytes=' },
      example: 'bytes=0-1023',
    },
  };
}
