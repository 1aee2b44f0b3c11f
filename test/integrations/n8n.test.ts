/**
 * The n8n node (integrations/n8n), loaded from its package as n8n loads community nodes and run by n8n's own
 * engine (n8n-core's WorkflowExecute, see ../helpers/n8n-engine.ts) against a real `mediaflow serve` with an API
 * key: inputs as URLs and as binary files uploaded as file parts, waiting for the job by polling, the result
 * downloaded as binary data, and mediaflow's errors as node errors.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type {
  NodeApiError,
  NodeOperationError,
  IDataObject,
  IExecuteFunctions,
  ILoadOptionsFunctions,
  INodeExecutionData,
  INodePropertyOptions,
  INodeType,
  ICredentialType,
  IRun,
  ResourceMapperFields,
} from 'n8n-workflow';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixture, fixtures } from '../helpers/fixtures.js';
import { startFileServer, type FileServer } from '../helpers/file-server.js';
import { assertNearRgb, audioOf, durationOf, frameRgb, probe, videoOf } from '../helpers/media.js';
import { loadNodeOptions, nodeSubtitle, runWorkflow, type WorkflowRun } from '../helpers/n8n-engine.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';
import { PackageDirectoryLoader } from 'n8n-core';
import { readCatalogue, type Catalogue } from '../../integrations/n8n/nodes/Mediaflow/catalogue.js';
import committed from '../../integrations/n8n/nodes/Mediaflow/operations.json' with { type: 'json' };

const API_KEY = 'n8n-node-test-key';
const PACKAGE = path.resolve(import.meta.dirname, '../../integrations/n8n');

/**
 * The node before ours, standing in for n8n's "Read/Write Files from Disk": one item whose binary properties
 * are the fixture files it names (`{"data": "small-300x200.png"}`), made with n8n's prepareBinaryData.
 */
const readFixtures: INodeType = {
  description: {
    displayName: 'Read Fixtures',
    name: 'readFixtures',
    group: ['input'],
    version: 1,
    description: 'Fixture files as binary data',
    defaults: { name: 'Read Fixtures' },
    inputs: ['main'],
    outputs: ['main'],
    properties: [{ displayName: 'Files', name: 'files', type: 'json', default: '{}' }],
  },
  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    const files = JSON.parse(this.getNodeParameter('files', 0) as string) as Record<string, string>;
    const binary: INodeExecutionData['binary'] = {};
    for (const [property, name] of Object.entries(files)) {
      binary[property] = await this.helpers.prepareBinaryData(await readFile(await fixture(name)), name);
    }
    return [[{ json: {}, binary }]];
  },
};

/** The requests of a part of the server's log (Fastify's "incoming request" and "request completed" lines). */
function requestsIn(log: string): Array<{ method: string; url: string; status?: number }> {
  const requests = new Map<string, { method: string; url: string; status?: number }>();
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as {
      reqId?: string;
      req?: { method: string; url: string };
      res?: { statusCode: number };
    };
    if (entry.reqId && entry.req) requests.set(entry.reqId, { method: entry.req.method, url: entry.req.url });
    const request = entry.reqId ? requests.get(entry.reqId) : undefined;
    if (request && entry.res) request.status = entry.res.statusCode;
  }
  return [...requests.values()];
}

describe('the n8n node, in n8n-core, against mediaflow serve', () => {
  let files: FileServer;
  let server: ServeProcess;
  let dataDir: string;
  let scratch: string;
  let mediaflow: INodeType;
  let credential: ICredentialType;
  let downloadStarted!: () => void;
  let downloadEnded!: () => void;
  const downloading = new Promise<void>((resolve) => (downloadStarted = resolve));
  const downloadClosed = new Promise<void>((resolve) => (downloadEnded = resolve));

  before(async () => {
    // Before anything of n8n's runs: it writes its settings there (see ../helpers/n8n-engine.ts).
    scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-n8n-out-'));
    process.env.N8N_USER_FOLDER = scratch;
    // The package as n8n loads a community node: its package.json's n8n section, then the built files in dist/
    // (`npm test` builds them first: npm run build -w n8n-nodes-mediaflow).
    const loader = new PackageDirectoryLoader(PACKAGE);
    await loader.loadAll();
    assert.deepEqual(
      [Object.keys(loader.nodeTypes), Object.keys(loader.credentialTypes)],
      [['mediaflow'], ['mediaflowApi']],
    );
    mediaflow = loader.nodeTypes.mediaflow!.type as INodeType;
    credential = loader.credentialTypes.mediaflowApi!.type;
    await fixtures(
      'small-300x200.png',
      'tone-2s-44k-stereo.mp3',
      'tone-3s-44k-stereo.mp3',
      'clip-3s-640x360-25fps.mp4',
      'red-640x360.jpg',
      'hello.srt',
    );
    // An input that never arrives: its job stays in its download until cancelled, which closes the connection.
    files = await startFileServer({
      '/never.mp4': (req) => {
        downloadStarted();
        req.socket.once('close', downloadEnded);
      },
    });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-n8n-'));
    server = await startServeProcess(dataDir, { MEDIAFLOW_API_KEY: API_KEY });
  });

  after(async () => {
    delete process.env.N8N_USER_FOLDER;
    server?.child.kill('SIGKILL');
    await files?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  /** Read Fixtures → Mediaflow with these parameters, run by n8n-core. */
  const run = (parameters: IDataObject, inputs: Record<string, string> = {}): WorkflowRun =>
    runWorkflow(
      [
        { name: 'Read Fixtures', type: readFixtures, parameters: { files: JSON.stringify(inputs) } },
        { name: 'Mediaflow', type: mediaflow, parameters: parameters as never },
      ],
      credential,
      { baseUrl: server.base, apiKey: API_KEY },
    );

  /** The Mediaflow node's output items, the run having succeeded. */
  const outputOf = (result: IRun): INodeExecutionData[] => {
    assert.equal(result.data.resultData.error, undefined, String(result.data.resultData.error?.message));
    return result.data.resultData.runData.Mediaflow![0]!.data!.main![0]!;
  };

  /** A binary property of an output item, written to a file for ffprobe. */
  const saved = async (item: INodeExecutionData, property: string): Promise<string> => {
    const binary = item.binary?.[property];
    assert.ok(binary, `the item has binary property ${property}`);
    const file = path.join(scratch, `${property}-${binary.fileName}`);
    await writeFile(file, Buffer.from(binary.data, 'base64'));
    return file;
  };

  it('offers every operation and pipeline the server lists, with the fields the server describes', async () => {
    const live = await readCatalogue(server.base, API_KEY);
    assert.deepEqual(
      committed as Catalogue,
      live,
      'operations.json is what the server describes: run `npm run generate -w n8n-nodes-mediaflow`',
    );
    const openapi = (await (await fetch(`${server.base}/openapi.json`)).json()) as {
      paths: Record<string, { post?: { operationId: string; 'x-mediaflow-plugin'?: unknown } }>;
    };
    const pipelines = (await (
      await fetch(`${server.base}/pipelines`, { headers: { 'X-API-Key': API_KEY } })
    ).json()) as { pipelines: Array<{ name: string }> };
    const operation = mediaflow.description.properties.find((property) => property.name === 'operation')!;
    const offered = (operation.options as Array<{ value: string }>).map((option) => option.value).sort();
    const listed = [
      ...Object.values(openapi.paths).flatMap((item) =>
        item.post?.['x-mediaflow-plugin'] ? [item.post.operationId] : [],
      ),
      ...pipelines.pipelines.map((pipeline) => `pipeline:${pipeline.name}`),
    ].sort();
    assert.ok(listed.length > 25, `the server lists its operations and pipelines (${listed.length})`);
    assert.deepEqual(offered, listed);
  });

  it('labels fields as n8n spells them: URL, URLs and FPS in capitals, short words in lower case', () => {
    const labels = (prefix: string) =>
      mediaflow.description.properties
        .filter((property) => property.name.startsWith(prefix))
        .flatMap((property) => [
          property.displayName,
          ...((property.options ?? []) as Array<{ displayName?: string }>).flatMap((option) =>
            option.displayName ? [option.displayName] : [],
          ),
        ]);
    assert.deepEqual(labels('merge_audios__'), [
      'Audio URLs Source',
      'Audio URLs',
      'Audio URLs: Input Binary Fields',
      'Additional Fields',
      'Format',
    ]);
    assert.deepEqual(labels('resize_image__image_url'), [
      'Image URL Source',
      'Image URL',
      'Image URL: Input Binary Field',
    ]);
    assert.ok(labels('images_to_video__more').includes('FPS'));
    assert.ok(labels('images_to_video__more').includes('Seconds per Image'));
    const everyLabel = labels('');
    assert.deepEqual(
      everyLabel.filter((label) => /\b(Url|Urls|Fps)\b/.test(label)),
      [],
      'no label spells URL or FPS in lower case',
    );
  });

  it('shows the chosen operation on the canvas by its name in the Operation list, not its value', () => {
    const operation = mediaflow.description.properties.find((property) => property.name === 'operation')!;
    const options = operation.options as Array<{ name: string; value: string }>;
    const named = (value: string) => options.find((option) => option.value === value)!.name;
    assert.equal(named('merge-audios'), 'Merge Audios');
    assert.equal(named('pipeline:text-to-short'), 'Pipeline: Text to Short');
    assert.equal(named('convert_image_from_url'), 'Convert Image from URL');
    for (const option of options) {
      assert.equal(nodeSubtitle(mediaflow, { operation: option.value }), option.name, option.value);
    }
    // A workflow made with an operation this catalogue no longer has still shows what it holds.
    assert.equal(nodeSubtitle(mediaflow, { operation: 'retired-operation' }), 'retired-operation');
  });

  it('runs an operation on a URL and outputs its result URL', async () => {
    const result = await run({
      operation: 'resize_image',
      resize_image__image_url: files.url('/f/small-300x200.png'),
      resize_image__width: 120,
      resize_image__height: 80,
    });
    const [item] = outputOf(result);
    const output = String(item!.json.output_file);
    assert.match(output, /\/uploads\/.*_resized\.jpg$/);
    assert.deepEqual(item!.json.result_urls, [output]);
    const file = path.join(scratch, 'resized.jpg');
    await writeFile(file, Buffer.from(await (await fetch(output)).arrayBuffer()));
    const video = videoOf(await probe(file))!;
    assert.deepEqual([video.width, video.height], [120, 80]);
  });

  it('uploads a binary property as the file part of the input field and downloads the result', async () => {
    const result = await run(
      {
        operation: 'convert_image_from_url',
        convert_image_from_url__image_url__source: 'binary',
        convert_image_from_url__image_url__binary: 'picture',
        convert_image_from_url__target_format: 'webp',
        downloadResult: true,
      },
      { picture: 'small-300x200.png' },
    );
    const [item] = outputOf(result);
    assert.equal(item!.binary!.data!.mimeType, 'image/webp');
    const video = videoOf(await probe(await saved(item!, 'data')))!;
    assert.deepEqual([video.codec_name, video.width, video.height], ['webp', 300, 200]);
  });

  it('uploads several binary properties as the parts of a list field, in order', async () => {
    const result = await run(
      {
        operation: 'merge-audios',
        merge_audios__audio_urls__source: 'binary',
        merge_audios__audio_urls__binary: 'first, second',
        merge_audios__more: { format: 'wav' },
        downloadResult: true,
      },
      { first: 'tone-2s-44k-stereo.mp3', second: 'tone-3s-44k-stereo.mp3' },
    );
    const [item] = outputOf(result);
    const probed = await probe(await saved(item!, 'data'));
    assert.equal(audioOf(probed)!.codec_name, 'pcm_s16le');
    assert.ok(Math.abs(durationOf(probed) - 5) < 0.2, `two parts of 2 s and 3 s make 5 s: ${durationOf(probed)}`);
  });

  it('waits for a long job by polling it, then downloads the result as binary data', async () => {
    const before = server.output().length;
    const result = await run(
      {
        operation: 'convert-video',
        convert_video__video_url__source: 'binary',
        convert_video__video_url__binary: 'data',
        convert_video__more: { format: 'webm' },
        waitForCompletion: true,
        downloadResult: true,
        binaryPropertyOutput: 'video',
      },
      { data: 'clip-3s-640x360-25fps.mp4' },
    );
    const [item] = outputOf(result);
    assert.match(String(item!.json.job_id), /^[0-9a-f-]{36}$/);
    const probed = await probe(await saved(item!, 'video'));
    assert.equal(item!.binary!.video!.mimeType, 'video/webm');
    assert.match(videoOf(probed)!.codec_name!, /^vp[89]$/);
    assert.deepEqual([videoOf(probed)!.width, videoOf(probed)!.height], [640, 360]);
    assert.ok(Math.abs(durationOf(probed) - 3) < 0.2, `the whole clip: ${durationOf(probed)}`);
    // Submitted as a job (202 at once), then read by GET /jobs/<id> until it ended: no request held open.
    const requests = requestsIn(server.output().slice(before));
    const submitted = requests.find((request) => request.method === 'POST');
    assert.deepEqual(submitted, { method: 'POST', url: '/convert-video/', status: 202 });
    const polls = requests.filter((request) => request.url === `/jobs/${String(item!.json.job_id)}`);
    assert.ok(polls.length >= 2, `polled ${polls.length} times`);
    assert.ok(polls.every((poll) => poll.method === 'GET' && poll.status === 200));
  });

  it('outputs the queued job at once without Wait for Completion', async () => {
    const result = await run({
      operation: 'resize_image',
      resize_image__image_url: files.url('/f/small-300x200.png'),
      resize_image__width: 30,
      resize_image__height: 20,
      waitForCompletion: false,
    });
    const [item] = outputOf(result);
    const id = String(item!.json.job_id);
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(item!.json.status_url, `${server.base}/jobs/${id}`);
    assert.equal(item!.binary, undefined);
  });

  it('runs a pipeline with uploaded files, a list of them, and a URL, and downloads its result', async () => {
    const result = await run(
      {
        operation: 'pipeline:podcast',
        pipeline_podcast__intro__source: 'binary',
        pipeline_podcast__intro__binary: 'intro',
        pipeline_podcast__segments__source: 'binary',
        pipeline_podcast__segments__binary: 'one,two',
        pipeline_podcast__outro: files.url('/f/tone-2s-44k-stereo.mp3'),
        pipeline_podcast__more: { format: 'wav' },
        downloadResult: true,
      },
      { intro: 'tone-2s-44k-stereo.mp3', one: 'tone-3s-44k-stereo.mp3', two: 'tone-3s-44k-stereo.mp3' },
    );
    const [item] = outputOf(result);
    assert.deepEqual(Object.keys(item!.json.outputs as object), ['episode']);
    const probed = await probe(await saved(item!, 'data'));
    assert.equal(audioOf(probed)!.codec_name, 'pcm_s16le');
    assert.ok(Math.abs(durationOf(probed) - 10) < 0.3, `2 s + 3 s + 3 s + 2 s: ${durationOf(probed)}`);
  });

  /** One of the node's methods, called as the editor has n8n call it, with the node's current parameters. */
  const editorLoads = <T>(
    kind: 'loadOptions' | 'resourceMapping',
    name: string,
    parameters: IDataObject,
    path: string,
  ) => {
    const method = (mediaflow.methods?.[kind] as Record<string, (this: ILoadOptionsFunctions) => Promise<T>>)[name]!;
    return loadNodeOptions(
      { name: 'Mediaflow', type: mediaflow, parameters: parameters as never },
      method,
      `parameters.${path}`,
      credential,
      { baseUrl: server.base, apiKey: API_KEY },
    );
  };

  it("offers the server's templates in Render, and the picked template's merge fields as its inputs", async () => {
    const properties = new Map(mediaflow.description.properties.map((property) => [property.name, property]));
    const picker = properties.get('render__template')!;
    assert.equal(picker.type, 'options');
    assert.equal(picker.typeOptions?.loadOptionsMethod, 'templates');
    const merge = properties.get('render__merge')!;
    assert.equal(merge.type, 'resourceMapper');
    assert.deepEqual(merge.typeOptions?.loadOptionsDependsOn, ['render__template']);
    assert.equal(merge.typeOptions?.resourceMapper?.resourceMapperMethod, 'templateFields');
    // The edit document stays an input of its own, as JSON, for a render without a template.
    const more = properties.get('render__more')!.options as Array<{ name: string; type: string }>;
    assert.deepEqual(
      more.map((option) => [option.name, option.type]),
      [
        ['dry_run', 'boolean'],
        ['edit', 'json'],
        ['fanout', 'boolean'],
        ['storyboard', 'boolean'],
      ],
    );

    const listed = await editorLoads<INodePropertyOptions[]>(
      'loadOptions',
      'templates',
      { operation: 'render' },
      'render__template',
    );
    assert.deepEqual(
      listed.map((option) => option.value),
      ['', 'audiogram', 'narrated-short', 'quote-card'],
    );
    assert.match(String(listed[3]!.description), /^A square 1080x1080 quote card/);
    const fields = await editorLoads<ResourceMapperFields>(
      'resourceMapping',
      'templateFields',
      { operation: 'render', render__template: 'quote-card' },
      'render__merge',
    );
    assert.deepEqual(
      fields.fields.map((field) => [field.id, field.displayName, field.type, field.required, field.defaultValue]),
      [
        ['QUOTE', 'QUOTE', 'string', true, undefined],
        ['AUTHOR', 'AUTHOR', 'string', true, undefined],
        ['DURATION', 'DURATION', 'number', false, 6],
        ['BACKGROUND', 'BACKGROUND', 'string', false, '#1E293B'],
        ['ACCENT', 'ACCENT', 'string', false, '#F59E0B'],
      ],
    );
    const none = await editorLoads<ResourceMapperFields>(
      'resourceMapping',
      'templateFields',
      { operation: 'render', render__template: '' },
      'render__merge',
    );
    assert.deepEqual(none, { fields: [], emptyFieldsNotice: 'Pick a template first' });
  });

  it('renders a template with its merge fields mapped and one uploaded from a binary file', async () => {
    const { fields } = await editorLoads<ResourceMapperFields>(
      'resourceMapping',
      'templateFields',
      { operation: 'render', render__template: 'audiogram' },
      'render__merge',
    );
    assert.ok(fields.some((field) => field.id === 'COVER_URL' && field.displayName === 'COVER_URL (URL)'));
    const result = await run(
      {
        operation: 'render',
        render__template: 'audiogram',
        // The mapper's value as the editor stores it: the fields it loaded, and the values typed in.
        render__merge: {
          mappingMode: 'defineBelow',
          value: {
            AUDIO_URL: files.url('/f/tone-2s-44k-stereo.mp3'),
            CAPTIONS_URL: files.url('/f/hello.srt'),
            DURATION: 1,
            TITLE: 'From n8n',
          },
          matchingColumns: [],
          schema: fields.filter((field) => field.id !== 'COVER_URL'),
          attemptToConvertTypes: false,
          convertFieldsToString: false,
        },
        render__merge_files: 'COVER_URL=cover',
        downloadResult: true,
      },
      { cover: 'red-640x360.jpg' },
    );
    const [item] = outputOf(result);
    assert.equal(item!.json.duration, 1);
    assert.match(String(item!.json.output_file), /\/uploads\/[0-9a-f-]{36}\/render\.mp4$/);
    const file = await saved(item!, 'data');
    const probed = await probe(file);
    assert.deepEqual([videoOf(probed)!.width, videoOf(probed)!.height], [1080, 1920]);
    assert.ok(Math.abs(durationOf(probed) - 1) < 0.05, `DURATION 1: ${durationOf(probed)}`);
    const frame = await frameRgb(file, 0.5);
    assertNearRgb(frame.pixel(540, 960), [255, 0, 0], 40, 'the uploaded cover in the middle');
    assertNearRgb(frame.pixel(20, 20), [0x0f, 0x17, 0x2a], 12, "the template's default background");
  });

  it("turns mediaflow's error answer into a NodeApiError with its code and text", async () => {
    const fields = { image_url: 'ftp://example.com/a.png', width: '10', height: '10' };
    const direct = await fetch(`${server.base}/resize_image/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-Key': API_KEY },
      body: JSON.stringify(fields),
    });
    const expected = (await direct.json()) as { error: string; code: string };
    assert.equal(direct.status, 400);
    const result = await run({
      operation: 'resize_image',
      resize_image__image_url: fields.image_url,
      resize_image__width: 10,
      resize_image__height: 10,
    });
    // The run's error is the node's error as n8n keeps it in the execution: its fields, its class by name.
    const error = result.data.resultData.error as NodeApiError;
    assert.equal(error.name, 'NodeApiError');
    assert.equal(error.httpCode, '400');
    assert.equal(error.message, `${expected.error} [${expected.code}]`);
    assert.deepEqual(error.errorResponse, expected);
    assert.equal(expected.code, 'MF_ERR_URL');
  });

  it("turns a failed job's error into a NodeOperationError with its code and text", async () => {
    const result = await run({
      operation: 'resize_image',
      resize_image__image_url: files.url('/f/not-media.txt'),
      resize_image__width: 10,
      resize_image__height: 10,
    });
    const error = result.data.resultData.error as NodeOperationError;
    assert.equal(error.name, 'NodeOperationError');
    assert.match(error.message, / \[MF_ERR_MEDIA\]$/);
    assert.match(String(error.description), /failed \(status 422, code MF_ERR_MEDIA\)/);
  });

  it('cancels the job when the workflow is stopped while it waits', async () => {
    const before = server.output().length;
    const running = run({
      operation: 'convert-video',
      convert_video__video_url: files.url('/never.mp4'),
      waitForCompletion: true,
    });
    await downloading;
    running.cancel();
    await downloadClosed;
    // The server's log arrives through a pipe: read it until the node's DELETE of the job is in it.
    const deleted = () =>
      requestsIn(server.output().slice(before)).find((request) => request.method === 'DELETE' && request.status);
    while (!deleted()) await new Promise((resolve) => setTimeout(resolve, 50));
    const cancelled = deleted()!;
    assert.match(cancelled.url, /^\/jobs\/[0-9a-f-]{36}$/);
    assert.equal(cancelled.status, 200);
    // The DELETE ends the job's download at once; its record says so when the job has wound down.
    let status = 'running';
    while (status === 'running' || status === 'queued') {
      const answer = await fetch(`${server.base}${cancelled.url}`, { headers: { 'X-API-Key': API_KEY } });
      status = ((await answer.json()) as { status: string }).status;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 'cancelled');
  });
});
