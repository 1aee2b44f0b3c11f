/**
 * ONNX models written from TypeScript, for the neural voices' tests and benchmark (piper-onnx.ts, piper-low-onnx.ts):
 * the few protobuf messages a model needs (ModelProto, GraphProto, NodeProto, TensorProto, AttributeProto,
 * ValueInfoProto, as onnx.proto numbers their fields), and a builder that names each node's output and counts the
 * weights it holds.
 */
import { bytesField, intField, message, varint } from '../../src/engine/voice/protobuf.js';
import { seeded } from './seeded.js';

/** TensorProto.DataType values used here. */
export const FLOAT = 1;
export const INT64 = 7;
/** AttributeProto.AttributeType values. */
const ATTRIBUTE_FLOAT = 1;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;
/** Protobuf's wire type of a 32-bit value (a float attribute's). */
const WIRE_FIXED32 = 5;

/** A graph's initializer: a tensor named `name`, its values as raw_data. */
export const tensor = (name: string, type: number, dims: number[], data: Buffer): Buffer =>
  message(5, ...dims.map((d) => intField(1, d)), intField(2, type), bytesField(8, name), bytesField(9, data));

/** float32 values, little-endian, as raw_data holds them. */
export const floats = (values: ArrayLike<number>): Buffer => {
  const data = Buffer.alloc(4 * values.length);
  for (let i = 0; i < values.length; i++) data.writeFloatLE(values[i]!, 4 * i);
  return data;
};

export const int64s = (values: number[]): Buffer => {
  const data = Buffer.alloc(8 * values.length);
  values.forEach((value, i) => data.writeBigInt64LE(BigInt(value), 8 * i));
  return data;
};

/** A graph's node: `op` from `inputs` to `outputs` (it is named after its first output). */
export const node = (op: string, inputs: string[], outputs: string[], attributes: Buffer[] = []): Buffer =>
  message(
    1,
    ...inputs.map((input) => bytesField(1, input)),
    ...outputs.map((output) => bytesField(2, output)),
    bytesField(3, `${op}_${outputs[0]}`),
    bytesField(4, op),
    ...attributes,
  );

export const intAttribute = (name: string, value: number): Buffer =>
  message(5, bytesField(1, name), intField(3, value), intField(20, ATTRIBUTE_INT));

export const intsAttribute = (name: string, values: number[]): Buffer =>
  message(5, bytesField(1, name), ...values.map((value) => intField(8, value)), intField(20, ATTRIBUTE_INTS));

export const floatAttribute = (name: string, value: number): Buffer => {
  const bits = Buffer.alloc(4);
  bits.writeFloatLE(value);
  return message(5, bytesField(1, name), varint((2 << 3) | WIRE_FIXED32), bits, intField(20, ATTRIBUTE_FLOAT));
};

/** A graph input (`field` 11) or output (12): a tensor of `type` whose dimensions are numbers or named (dynamic). */
export const valueInfo = (field: number, name: string, type: number, dims: Array<number | string>): Buffer =>
  message(
    field,
    bytesField(1, name),
    message(
      2,
      message(
        1,
        intField(1, type),
        message(
          2,
          ...dims.map((d) => (typeof d === 'number' ? message(1, intField(1, d)) : message(1, bytesField(2, d)))),
        ),
      ),
    ),
  );

/** A ModelProto of IR version 8: the graph's fields, the default domain's `opset`, and metadata entries. */
export const modelOf = (graph: Buffer[], opset: number, metadata: Buffer[] = []): Buffer =>
  Buffer.concat([
    intField(1, 8),
    bytesField(2, 'mediaflow-tests'),
    message(7, ...graph),
    message(8, bytesField(1, ''), intField(2, opset)),
    ...metadata,
  ]);

/**
 * A graph built node by node: each op answers the names of its outputs, constants are initializers, and `weight`
 * makes a random one, counted in `parameters` as the network's own weights are.
 */
export class GraphBuilder {
  readonly nodes: Buffer[] = [];
  readonly initializers: Buffer[] = [];
  /** Weights (float values) the graph holds: what a network's parameter count counts. */
  parameters = 0;
  private names = 0;
  private readonly constants = new Map<string, string>();
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = seeded(seed);
  }

  private fresh(prefix: string): string {
    return `${prefix}_${this.names++}`;
  }

  /** Runs `op` on `inputs` into `outputs` fresh names. */
  ops(op: string, inputs: string[], attributes: Buffer[] = [], outputs = 1): string[] {
    const names = Array.from({ length: outputs }, () => this.fresh(op.toLowerCase()));
    this.nodes.push(node(op, inputs, names, attributes));
    return names;
  }

  /** Runs `op`, of one output. */
  op(op: string, inputs: string[], attributes: Buffer[] = []): string {
    return this.ops(op, inputs, attributes)[0]!;
  }

  /** A constant, made once per value: int64 (a scalar when `dims` is []) or float. */
  private constant(type: number, dims: number[], values: number[]): string {
    const key = `${type}:${dims.join('x')}:${values.join(',')}`;
    let name = this.constants.get(key);
    if (!name) {
      name = this.fresh('const');
      this.initializers.push(tensor(name, type, dims, type === INT64 ? int64s(values) : floats(values)));
      this.constants.set(key, name);
    }
    return name;
  }

  /** A 1-D int64 constant (axes, starts, a shape). */
  ints(values: number[]): string {
    return this.constant(INT64, [values.length], values);
  }

  /** An int64 scalar. */
  int(value: number): string {
    return this.constant(INT64, [], [value]);
  }

  /** A float scalar. */
  float(value: number): string {
    return this.constant(FLOAT, [], [value]);
  }

  /** A weight of `dims`, uniform random with standard deviation `std` (or every value `fill`): counted. */
  weight(prefix: string, dims: number[], std: number, fill?: number): string {
    const values = new Float32Array(dims.reduce((a, b) => a * b, 1));
    const half = std * Math.sqrt(3);
    for (let i = 0; i < values.length; i++) values[i] = fill ?? (2 * this.random() - 1) * half;
    const name = this.fresh(prefix);
    this.initializers.push(tensor(name, FLOAT, dims, Buffer.from(values.buffer, values.byteOffset, values.byteLength)));
    this.parameters += values.length;
    return name;
  }
}
