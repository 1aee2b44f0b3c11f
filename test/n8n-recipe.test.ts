/**
 * The n8n Code node of docs/jobs.md, run as n8n runs it (a function body given `$input` and `require`), on what an
 * n8n Wait node hands it: the headers and the parsed body of a real, signed delivery from mediaflow.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from './helpers/webhook-receiver.js';

const SECRET = `whsec_${Buffer.from('n8n-recipe-secret-32-bytes-long!').toString('base64')}`;

interface Item {
  json: { headers: Record<string, unknown>; body: unknown };
}

/** The Code node from docs/jobs.md: the JavaScript block that checks mediaflow's signature. */
async function documentedCodeNode(): Promise<string> {
  const page = await readFile(path.resolve(import.meta.dirname, '../docs/jobs.md'), 'utf8');
  const blocks = [...page.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/^ {2}/gm, ''));
  const block = blocks.find((code) => code.includes('mediaflow webhook signature check'));
  assert.ok(block, 'docs/jobs.md has the signature-checking Code node');
  return block;
}

/** Runs a Code node ("Run Once for All Items") as n8n does, with only `crypto` allowed to `require`. */
function runCodeNode(code: string, secret: string, items: Item[]): Item[] {
  const allowed = createRequire(import.meta.url);
  const require = (name: string) => {
    if (name !== 'crypto') throw new Error(`Cannot find module '${name}'`);
    return allowed(name) as unknown;
  };
  const $input = { all: () => items };
  const body = code.replace("'whsec_...'", JSON.stringify(secret));
  return new Function('$input', 'require', body)($input, require) as Item[];
}

/** What an n8n Wait node ("On Webhook Call") outputs for a delivery: headers and the body parsed from JSON. */
const waitNodeItem = (delivery: Delivery, body: unknown = JSON.parse(delivery.body)): Item => ({
  json: { headers: delivery.headers as Record<string, unknown>, body },
});

describe("docs/jobs.md's n8n Code node checks mediaflow's webhook signature", () => {
  let files: FileServer;
  let server: TestServer;
  let receiver: WebhookReceiver;
  let delivery: Delivery;
  let code: string;

  before(async () => {
    code = await documentedCodeNode();
    await fixtures('small-300x200.png');
    files = await startFileServer();
    receiver = await startWebhookReceiver();
    server = await startMediaflow({ MEDIAFLOW_WEBHOOK_SECRET: SECRET });
    const res = await server.post('/resize_image/', {
      image_url: files.url('/f/small-300x200.png'),
      width: '32',
      height: '24',
      webhook_url: receiver.url('/resume'),
      // Text that JSON may write in more than one way: the rebuilt bytes must still be mediaflow's.
      metadata: JSON.stringify({ row: 7, ratio: 0.1, title: 'Zoë “quoted” ✓ \u2028 / </script>' }),
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    delivery = (await receiver.received(1))[0]!;
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
    await files?.close();
  });

  it('passes a real delivery, whose body JSON.stringify rebuilds byte for byte', () => {
    assert.equal(JSON.stringify(JSON.parse(delivery.body)), delivery.body);
    const items = [waitNodeItem(delivery)];
    assert.equal(runCodeNode(code, SECRET, items), items);
  });

  it('stops the workflow on a changed body, another secret or an old timestamp', () => {
    const forged = { ...(JSON.parse(delivery.body) as object), status: 'failed' };
    assert.throws(() => runCodeNode(code, SECRET, [waitNodeItem(delivery, forged)]), /signature does not match/);
    const other = `whsec_${Buffer.from('another-secret-of-32-bytes-long!').toString('base64')}`;
    assert.throws(() => runCodeNode(code, other, [waitNodeItem(delivery)]), /signature does not match/);
    // A replay: the right signature for an hour-old timestamp.
    const old = String(Math.floor(Date.now() / 1000) - 3600);
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const hmac = createRequire(import.meta.url)('crypto') as typeof import('node:crypto');
    const signature = hmac
      .createHmac('sha256', key)
      .update(`${String(delivery.headers['webhook-id'])}.${old}.${delivery.body}`)
      .digest('base64');
    const replayed: Delivery = {
      ...delivery,
      headers: { ...delivery.headers, 'webhook-timestamp': old, 'webhook-signature': `v1,${signature}` },
    };
    assert.throws(() => runCodeNode(code, SECRET, [waitNodeItem(replayed)]), /more than 5 minutes old/);
  });
});
