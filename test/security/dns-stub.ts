import dgram from 'node:dgram';
import net from 'node:net';

/**
 * A tiny authoritative DNS server for the network-namespace scenarios: A and AAAA answers with a
 * TTL of 0, NXDOMAIN for unknown names. An answer may be a function, called once per query, so a
 * name can change its address between lookups (DNS rebinding).
 */
export type Answer = string[] | ((queryNumber: number) => string[]);

export interface DnsRecords {
  [name: string]: { A?: Answer; AAAA?: Answer };
}

export interface DnsStub {
  /** Queries seen, by `name TYPE`, e.g. `rebind.test A`. */
  queries: Map<string, number>;
  close: () => Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  for (;;) {
    const length = message[offset];
    if (length === undefined) throw new Error('truncated question');
    offset++;
    if (length === 0) break;
    labels.push(message.toString('latin1', offset, offset + length));
    offset += length;
  }
  return { name: labels.join('.').toLowerCase(), end: offset };
}

function ipv6Bytes(address: string): Buffer {
  const bytes = Buffer.alloc(16);
  const parsed = net.isIPv6(address) ? address : '';
  if (!parsed) throw new Error(`not IPv6: ${address}`);
  // Expand `::` and an embedded dotted IPv4 tail.
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const parts = [...headParts, ...Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts];
  parts.forEach((part, i) => bytes.writeUInt16BE(parseInt(part || '0', 16), i * 2));
  return bytes;
}

function answer(message: Buffer, records: DnsRecords, queries: Map<string, number>): Buffer {
  const id = message.readUInt16BE(0);
  const flags = message.readUInt16BE(2);
  const { name, end } = readName(message, 12);
  const type = message.readUInt16BE(end);
  const question = message.subarray(12, end + 4);
  const typeName = type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : String(type);
  const key = `${name} ${typeName}`;
  const count = (queries.get(key) ?? 0) + 1;
  queries.set(key, count);
  const record = records[name];
  const source = record && (type === TYPE_A ? record.A : type === TYPE_AAAA ? record.AAAA : undefined);
  const addresses = typeof source === 'function' ? source(count) : (source ?? []);
  const rcode = record ? 0 : 3;
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x8400 | (flags & 0x0100) | 0x0080 | rcode, 2); // response, authoritative, RD copied, RA
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const answers = addresses.map((address) => {
    const rdata = type === TYPE_A ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name in the question
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(0, 6); // TTL 0: nothing may cache it
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, question, ...answers]);
}

/** Starts the server on `host`:53 (UDP). */
export async function startDnsStub(records: DnsRecords, host = '127.0.0.1'): Promise<DnsStub> {
  const queries = new Map<string, number>();
  const socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  socket.on('message', (message, remote) => {
    try {
      socket.send(answer(message, records, queries), remote.port, remote.address);
    } catch {
      // a malformed query gets no answer
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(53, host, () => resolve());
  });
  return { queries, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}
