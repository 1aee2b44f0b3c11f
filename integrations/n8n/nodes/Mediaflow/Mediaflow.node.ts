import {
  NodeConnectionTypes,
  NodeOperationError,
  type IBinaryKeyData,
  type IDataObject,
  type IExecuteFunctions,
  type INodeExecutionData,
  type INodeType,
  type INodeTypeDescription,
  type JsonObject,
} from 'n8n-workflow';
import type { Catalogue } from './catalogue';
import { buildForm } from './request';
import { call, CREDENTIALS, resultUrls, waitForJob, type Job } from './jobs';
import { nodeProperties, operationSubtitle, operationValue } from './properties';
import { templateMethods } from './templates';
import catalogueFile from './operations.json';

const catalogue = catalogueFile as Catalogue;

/**
 * mediaflow in n8n: every operation and pipeline of operations.json (see scripts/generate-description.ts),
 * submitted as a job (`Prefer: respond-async`) with URLs or the item's binary files as inputs, then, with
 * "Wait for Completion", polled until it ends and its result files downloaded as binary data if asked.
 */
export class Mediaflow implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Mediaflow',
    name: 'mediaflow',
    icon: 'file:mediaflow.svg',
    group: ['transform'],
    version: 1,
    subtitle: operationSubtitle(catalogue),
    description: `Process video, audio and images with mediaflow (generated from mediaflow ${catalogue.version})`,
    defaults: { name: 'Mediaflow' },
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: CREDENTIALS, required: true }],
    properties: nodeProperties(catalogue),
  };

  // The server's render templates and their merge fields, read as the node is edited.
  methods = templateMethods(catalogue);

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    const items = this.getInputData();
    const credentials = await this.getCredentials(CREDENTIALS);
    const base = String(credentials.baseUrl).replace(/\/+$/, '');
    const apiKey = String(credentials.apiKey ?? '');
    const output: INodeExecutionData[] = [];
    for (let item = 0; item < items.length; item++) {
      try {
        output.push(await runItem(this, item, base, apiKey));
      } catch (error) {
        if (!this.continueOnFail()) throw error;
        const failure = error as NodeOperationError;
        output.push({ json: { error: failure.message, description: failure.description ?? null }, pairedItem: item });
      }
    }
    return [output];
  }
}

/** One item: submit its job, and wait for it and download its files when asked. */
async function runItem(
  ctx: IExecuteFunctions,
  item: number,
  base: string,
  apiKey: string,
): Promise<INodeExecutionData> {
  const operation = ctx.getNodeParameter('operation', item) as string;
  const entry = catalogue.entries.find((candidate) => operationValue(candidate) === operation);
  if (!entry) throw new NodeOperationError(ctx.getNode(), `Unknown operation '${operation}'`, { itemIndex: item });
  const options = ctx.getNodeParameter('options', item, {}) as IDataObject;
  const form = await buildForm(ctx, item, entry);
  if (options.webhookUrl) form.append('webhook_url', String(options.webhookUrl));
  if (options.metadata) form.append('metadata', String(options.metadata));
  const queued = await call<Job>(ctx, item, {
    method: 'POST',
    url: `${base}${entry.path}`,
    headers: { Prefer: 'respond-async' },
    body: form,
  });
  if (!ctx.getNodeParameter('waitForCompletion', item, true)) return { json: queued, pairedItem: item };
  const timeout = Number(options.timeoutMinutes ?? 120) * 60_000;
  const job = await waitForJob(ctx, item, base, apiKey, queued.job_id, timeout);
  const urls = resultUrls(job.result);
  const json = { ...job.result, job_id: job.job_id, result_urls: urls };
  if (!ctx.getNodeParameter('downloadResult', item, false)) return { json, pairedItem: item };
  const property = String(ctx.getNodeParameter('binaryPropertyOutput', item, 'data'));
  const binary: IBinaryKeyData = {};
  for (const [index, url] of urls.entries()) {
    binary[index === 0 ? property : `${property}_${index}`] = await download(ctx, base, url);
  }
  return { json, binary, pairedItem: item };
}

/** One result file as n8n binary data, streamed (the API key goes only to mediaflow's own address). */
async function download(ctx: IExecuteFunctions, base: string, url: string) {
  const request = { method: 'GET' as const, url, encoding: 'stream' as const, returnFullResponse: true };
  const answer = (
    url.startsWith(`${base}/`)
      ? await ctx.helpers.httpRequestWithAuthentication.call(ctx, CREDENTIALS, request)
      : await ctx.helpers.httpRequest(request)
  ) as { body: NodeJS.ReadableStream; headers: JsonObject };
  const name = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? 'result');
  const type = String(answer.headers['content-type'] ?? '').split(';')[0] || undefined;
  return await ctx.helpers.prepareBinaryData(answer.body as never, name, type);
}
