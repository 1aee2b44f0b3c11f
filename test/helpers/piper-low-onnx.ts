/**
 * A Piper "low" voice of random weights, written from TypeScript: Piper's VITS (rhasspy/piper,
 * src/python/piper_train/vits/) at the dimensions of its "low" quality, with the tone voice's inputs, output and
 * config (piper-onnx.ts), so that sherpa-onnx loads it as it loads a voice Piper publishes. It speaks noise, but it
 * does the work a real low voice does per token and per second of speech, in the same kinds of ops, as Piper's
 * export (export_onnx.py, SynthesizerTrn.infer) runs them:
 *
 * - the text encoder: the phoneme embedding, 6 transformer layers of 2 heads with relative position attention (a
 *   window of 4 either side, through the same pad, reshape and slice steps), LayerNorm, and a feed-forward of
 *   kernel 3 through 768 channels; then the projection to the prior's means and log-scales;
 * - the stochastic duration predictor, run in reverse: its DDS convolutions (depthwise, dilated, GELU) and the 3
 *   ConvFlows that inference uses, from noise scaled by noise_w;
 * - the expansion of each token to frames (the cumulative sum and the path matrix, then its product with the
 *   prior), the prior's noise scaled by noise_scale;
 * - the flow, 4 coupling layers in reverse, each a WaveNet of 4 layers of kernel 5 at 192 channels;
 * - the HiFi-GAN generator: 256 channels, ConvTranspose upsampling by 8, 8 and 4 (256 samples a frame), at each
 *   stage 3 residual blocks (type 2: kernels 3, 5 and 7, dilations 1-2, 2-6 and 3-12), and a final tanh.
 *
 * Two things differ, neither in cost: every token lasts FRAMES_PER_TOKEN frames times the length scale (rounded
 * up, as Piper rounds each token's duration), so the output's length is known (the predicted durations still reach
 * it, with weight 0); and the ConvFlows' rational-quadratic spline, tens of operations per token, is a shift.
 * Weights are uniform with the standard deviation 1/√fan-in, so the values stay finite.
 *
 * "low" is Piper's default network (hidden 192, the size of "medium"; "x_low" has 96 channels) at 16 kHz: 15.65
 * million weights here, 62.7 MB, against 63.1 MB for each published low voice (Piper's voices.json; x_low ones are
 * 20.6 MB, about 5 million weights). Generated in about a second.
 */
import { writeFile } from 'node:fs/promises';
import { bytesField } from '../../src/engine/voice/protobuf.js';
import {
  FLOAT,
  floatAttribute,
  GraphBuilder,
  intAttribute,
  intsAttribute,
  modelOf,
  node,
  valueInfo,
} from './onnx-graph.js';
import { MODEL_INPUTS, TONE_VOICE, toneConfig } from './piper-onnx.js';

/** Piper's "low" quality: piper_train's defaults (vits/config.py's low_quality, lightning.py), at 16 kHz. */
export const PIPER_LOW = {
  sampleRate: 16000,
  /** Piper's espeak phoneme map has 256 symbols. */
  symbols: 256,
  hidden: 192,
  filter: 768,
  heads: 2,
  layers: 6,
  kernel: 3,
  /** The relative attention's window, either side. */
  window: 4,
  /** The stochastic duration predictor's DDS convolutions: 3 layers of kernel 3; inference runs 3 of its 4 flows. */
  durationLayers: 3,
  durationFlows: 3,
  splineBins: 10,
  /** The flow's coupling layers, and each one's WaveNet. */
  couplings: 4,
  wavenetKernel: 5,
  wavenetLayers: 4,
  upsampleRates: [8, 8, 4],
  upsampleKernels: [16, 16, 8],
  upsampleInitial: 256,
  resblockKernels: [3, 5, 7],
  resblockDilations: [
    [1, 2],
    [2, 6],
    [3, 12],
  ],
} as const;

/** Frames each phoneme id lasts at length scale 1 (32 ms at 16 kHz: about 170 words a minute of English). */
export const FRAMES_PER_TOKEN = 2;
/** Samples a frame: the product of the upsample rates. */
export const SAMPLES_PER_FRAME = PIPER_LOW.upsampleRates.reduce((a, b) => a * b, 1);

/** Samples a token speaks at `lengthScale` (1 / speed), as the model rounds it. */
export const samplesPerToken = (lengthScale: number): number =>
  Math.ceil(Math.fround(FRAMES_PER_TOKEN * Math.fround(lengthScale))) * SAMPLES_PER_FRAME;

/** The model's bytes and its parameter count. */
export function lowModel(seed = 1): { bytes: Buffer; parameters: number } {
  const d = PIPER_LOW;
  const g = new GraphBuilder(seed);
  const op = g.op.bind(g);
  const axis = (value: number) => intAttribute('axis', value);

  // Shapes: a scalar dimension, a 1-D vector of scalars and numbers, and slices and pads along one axis.
  const dim = (x: string, at: number) => op('Gather', [op('Shape', [x]), g.int(at)], [axis(0)]);
  const one = (v: number | string) => (typeof v === 'number' ? g.ints([v]) : op('Unsqueeze', [v, g.ints([0])]));
  const vec = (...values: Array<number | string>) => op('Concat', values.map(one), [axis(0)]);
  const slice = (x: string, at: number, start: number | string, end: number | string, step = 1) =>
    op('Slice', [x, one(start), one(end), g.ints([at]), g.ints([step])]);
  const pad = (x: string, rank: number, at: number, before: number | string, after: number | string) =>
    op('Pad', [
      x,
      vec(...Array.from({ length: 2 * rank }, (_, i) => (i === at ? before : i === rank + at ? after : 0))),
    ]);
  const halves = (x: string) => g.ops('Split', [x], [axis(1)], 2) as [string, string];
  const transpose = (x: string, perm: number[]) => op('Transpose', [x], [intsAttribute('perm', perm)]);
  const mul = (...xs: string[]) => xs.reduce((a, b) => op('Mul', [a, b]));
  const add = (...xs: string[]) => xs.reduce((a, b) => op('Add', [a, b]));
  const flip = (x: string) => slice(x, 1, -1, Number.MIN_SAFE_INTEGER, -1);
  const mask = (lengths: string, length: string) =>
    op('Unsqueeze', [
      op(
        'Cast',
        [op('Less', [op('Range', [g.int(0), length, g.int(1)]), op('Unsqueeze', [lengths, g.ints([1])])])],
        [intAttribute('to', FLOAT)],
      ),
      g.ints([1]),
    ]);

  /** A Conv1d of PyTorch's: weight [out, in / group, k], bias, padding that keeps the length. */
  const conv = (
    x: string,
    from: number,
    to: number,
    kernel = 1,
    { dilation = 1, group = 1, bias = true }: { dilation?: number; group?: number; bias?: boolean } = {},
  ) => {
    const fanIn = (from / group) * kernel;
    const weight = g.weight('conv.weight', [to, from / group, kernel], 1 / Math.sqrt(fanIn));
    const pads = (dilation * (kernel - 1)) / 2;
    return op(
      'Conv',
      [x, weight, ...(bias ? [g.weight('conv.bias', [to], 1 / Math.sqrt(fanIn))] : [])],
      [
        intsAttribute('kernel_shape', [kernel]),
        intsAttribute('pads', [pads, pads]),
        intsAttribute('dilations', [dilation]),
        intAttribute('group', group),
      ],
    );
  };
  /** modules.LayerNorm: over the channels, with its gain and bias. */
  const layerNorm = (x: string, channels: number) => {
    const mean = (y: string) => op('ReduceMean', [y], [intsAttribute('axes', [1])]);
    const centred = op('Sub', [x, mean(x)]);
    const spread = op('Sqrt', [op('Add', [mean(mul(centred, centred)), g.float(1e-5)])]);
    const normal = op('Div', [centred, spread]);
    return add(
      mul(normal, g.weight('norm.gamma', [1, channels, 1], 0, 1)),
      g.weight('norm.beta', [1, channels, 1], 0, 0),
    );
  };
  const gelu = (x: string) => mul(x, g.float(0.5), op('Add', [op('Erf', [mul(x, g.float(Math.SQRT1_2))]), g.float(1)]));

  // The text encoder.
  const C = d.hidden;
  const kc = C / d.heads;
  const T = dim('input', 1);
  const xMask = mask('input_lengths', T);
  const embedding = g.weight('emb.weight', [d.symbols, C], 1 / Math.sqrt(C));
  let x = mul(transpose(mul(op('Gather', [embedding, 'input']), g.float(Math.sqrt(C))), [0, 2, 1]), xMask);
  const attnMask = mul(op('Unsqueeze', [xMask, g.ints([2])]), op('Unsqueeze', [xMask, g.ints([3])]));
  const masked = op('Equal', [attnMask, g.float(0)]);
  const T2m1 = op('Sub', [mul(T, g.int(2)), g.int(1)]);
  const Tm1 = op('Sub', [T, g.int(1)]);
  const padLength = op('Max', [op('Sub', [T, g.int(d.window + 1)]), g.int(0)]);
  const sliceStart = op('Max', [op('Sub', [g.int(d.window + 1), T]), g.int(0)]);
  /** MultiHeadAttention._get_relative_embeddings: the window's embeddings padded or cut to 2T - 1 positions. */
  const relative = () => {
    const embeddings = g.weight('emb_rel', [1, 2 * d.window + 1, kc], 1 / Math.sqrt(kc));
    const padded = op('Pad', [embeddings, vec(0, padLength, 0, 0, padLength, 0)]);
    return op('Unsqueeze', [slice(padded, 1, sliceStart, add(sliceStart, T2m1)), g.ints([0])]);
  };
  const heads = (y: string) => transpose(op('Reshape', [y, g.ints([1, d.heads, kc, -1])]), [0, 1, 3, 2]);
  const attention = (input: string) => {
    const [q, k, v] = [0, 1, 2].map(() => heads(conv(input, C, C)));
    const query = mul(q!, g.float(1 / Math.sqrt(kc)));
    let scores = op('MatMul', [query, transpose(k!, [0, 1, 3, 2])]);
    // _relative_position_to_absolute_position of the logits against the relative keys.
    const logits = op('MatMul', [query, transpose(relative(), [0, 1, 3, 2])]);
    const flat = pad(op('Reshape', [pad(logits, 4, 3, 0, 1), g.ints([1, d.heads, -1])]), 3, 2, 0, Tm1);
    const square = op('Reshape', [flat, vec(1, d.heads, op('Add', [T, g.int(1)]), T2m1)]);
    const local = op('Slice', [square, vec(0, Tm1), vec(T, T2m1), g.ints([2, 3])]);
    scores = op('Where', [masked, g.float(-1e4), add(scores, local)]);
    const p = op('Softmax', [scores], [axis(-1)]);
    // _absolute_position_to_relative_position of the weights, against the relative values.
    const skewed = pad(op('Reshape', [pad(p, 4, 3, 0, Tm1), g.ints([1, d.heads, -1])]), 3, 2, T, 0);
    const weights = slice(op('Reshape', [skewed, vec(1, d.heads, T, -1)]), 3, 1, Number.MAX_SAFE_INTEGER);
    const out = add(op('MatMul', [p, v!]), op('MatMul', [weights, relative()]));
    return conv(op('Reshape', [transpose(out, [0, 1, 3, 2]), g.ints([1, C, -1])]), C, C);
  };
  for (let layer = 0; layer < d.layers; layer++) {
    x = layerNorm(add(x, attention(x)), C);
    const inner = op('Relu', [conv(mul(x, xMask), C, d.filter, d.kernel)]);
    x = layerNorm(add(x, mul(conv(mul(inner, xMask), d.filter, C, d.kernel), xMask)), C);
  }
  x = mul(x, xMask);
  const [meanP, logScaleP] = halves(mul(conv(x, C, 2 * C), xMask));

  // The stochastic duration predictor, in reverse.
  const dds = (input: string, condition?: string) => {
    let h = condition ? add(input, condition) : input;
    for (let layer = 0; layer < d.durationLayers; layer++) {
      const dilation = d.kernel ** layer;
      let y = conv(mul(h, xMask), C, C, d.kernel, { dilation, group: C });
      y = gelu(layerNorm(y, C));
      y = gelu(layerNorm(conv(y, C, C), C));
      h = add(h, y);
    }
    return mul(h, xMask);
  };
  const scales = (at: number) => op('Gather', ['scales', g.int(at)], [axis(0)]);
  const condition = mul(conv(dds(conv(x, C, C)), C, C), xMask);
  const noise = (like: string) => op('RandomNormalLike', [like], [intAttribute('dtype', FLOAT)]);
  let z = mul(noise(op('Concat', [xMask, xMask], [axis(1)])), scales(2));
  for (let flow = 0; flow < d.durationFlows; flow++) {
    z = flip(z);
    const [x0, x1] = halves(z);
    const h = mul(conv(dds(conv(x0, 1, C), condition), C, 3 * d.splineBins - 1), xMask);
    const shift = mul(op('ReduceMean', [h], [intsAttribute('axes', [1])]), g.float(1 / Math.sqrt(C)));
    z = mul(op('Concat', [x0, op('Sub', [x1, shift])], [axis(1)]), xMask);
  }
  z = flip(z);
  const affineMean = g.weight('dp.affine.m', [2, 1], 0, 0);
  const affineLog = g.weight('dp.affine.logs', [2, 1], 0, 0);
  z = mul(op('Sub', [z, affineMean]), op('Exp', [op('Neg', [affineLog])]), xMask);
  const logDuration = slice(z, 1, 0, 1);

  // Each token's frames, and the prior expanded to them.
  const lengthScale = scales(1);
  const predicted = mul(op('Tanh', [logDuration]), g.float(0));
  const duration = op('Ceil', [mul(add(predicted, g.float(FRAMES_PER_TOKEN)), xMask, lengthScale)]);
  const frames = op(
    'Cast',
    [op('Max', [op('ReduceSum', [duration, g.ints([1, 2])], [intAttribute('keepdims', 0)]), g.float(1)])],
    [intAttribute('to', 7)],
  );
  const Ty = op('ReduceMax', [frames], [intsAttribute('axes', [0]), intAttribute('keepdims', 0)]);
  const yMask = mask(frames, Ty);
  const ends = op('CumSum', [duration, g.int(2)]);
  const starts = op('Sub', [ends, duration]);
  const frame = op('Unsqueeze', [
    op('Cast', [op('Range', [g.int(0), Ty, g.int(1)])], [intAttribute('to', FLOAT)]),
    g.ints([1]),
  ]);
  const before = (bound: string) => op('Cast', [op('Less', [frame, bound])], [intAttribute('to', FLOAT)]);
  const pathMask = mul(op('Unsqueeze', [xMask, g.ints([2])]), op('Unsqueeze', [yMask, g.ints([3])]));
  const path = op('Squeeze', [mul(op('Sub', [before(ends), before(starts)]), pathMask), g.ints([1])]);
  const expand = (stats: string) => transpose(op('MatMul', [path, transpose(stats, [0, 2, 1])]), [0, 2, 1]);
  const mean = expand(meanP);
  const spread = op('Exp', [expand(logScaleP)]);
  z = add(mean, mul(noise(mean), spread, scales(0)));

  // The flow, in reverse.
  const wavenet = (input: string) => {
    let h = input;
    let output: string | undefined;
    for (let layer = 0; layer < d.wavenetLayers; layer++) {
      const [a, b] = halves(conv(h, C, 2 * C, d.wavenetKernel));
      const acts = mul(op('Tanh', [a]), op('Sigmoid', [b]));
      const last = layer === d.wavenetLayers - 1;
      const both = conv(acts, C, last ? C : 2 * C);
      const [residual, skip] = last ? [undefined, both] : halves(both);
      if (residual) h = mul(add(h, residual), yMask);
      output = output ? add(output, skip) : skip;
    }
    return mul(output!, yMask);
  };
  for (let coupling = 0; coupling < d.couplings; coupling++) {
    z = flip(z);
    const [x0, x1] = halves(z);
    const h = wavenet(mul(conv(x0, C / 2, C), yMask));
    const shift = mul(conv(h, C, C / 2), yMask);
    z = op('Concat', [x0, mul(op('Sub', [x1, shift]), yMask)], [axis(1)]);
  }

  // The HiFi-GAN generator.
  const leaky = (y: string, slope: number) => op('LeakyRelu', [y], [floatAttribute('alpha', slope)]);
  let channels = d.upsampleInitial;
  let audio = conv(mul(z, yMask), C, channels, 7);
  d.upsampleRates.forEach((rate, stage) => {
    const kernel = d.upsampleKernels[stage]!;
    const fanIn = (channels * kernel) / rate;
    const up = [
      g.weight('up.weight', [channels, channels / 2, kernel], 1 / Math.sqrt(fanIn)),
      g.weight('up.bias', [channels / 2], 1 / Math.sqrt(fanIn)),
    ];
    audio = op(
      'ConvTranspose',
      [leaky(audio, 0.1), ...up],
      [
        intsAttribute('kernel_shape', [kernel]),
        intsAttribute('strides', [rate]),
        intsAttribute('pads', [(kernel - rate) / 2, (kernel - rate) / 2]),
      ],
    );
    channels /= 2;
    const blocks = d.resblockKernels.map((size, block) => {
      let y = audio;
      for (const dilation of d.resblockDilations[block]!)
        y = add(conv(leaky(y, 0.1), channels, channels, size, { dilation }), y);
      return y;
    });
    audio = op('Div', [add(...blocks), g.float(blocks.length)]);
  });
  audio = op('Tanh', [conv(leaky(audio, 0.01), channels, 1, 7, { bias: false })]);
  g.nodes.push(node('Identity', [audio], ['output']));

  const bytes = modelOf(
    [
      ...g.nodes,
      bytesField(2, 'piper_low_random'),
      ...g.initializers,
      ...MODEL_INPUTS.piper,
      valueInfo(12, 'output', FLOAT, [1, 1, 'samples']),
    ],
    15,
  );
  return { bytes, parameters: g.parameters };
}

/**
 * Writes `<file>` (the model) and `<file>.json` (its config), as Piper publishes a voice: the tone voice's config
 * (its phonemes, espeak-ng's en-us) with the symbols of Piper's map. Answers the parameter count.
 */
export async function writeLowVoice(file: string, seed = 1): Promise<number> {
  const { bytes, parameters } = lowModel(seed);
  await writeFile(file, bytes);
  const config = { ...toneConfig({ ...TONE_VOICE, sampleRate: PIPER_LOW.sampleRate }), num_symbols: PIPER_LOW.symbols };
  await writeFile(`${file}.json`, `${JSON.stringify({ ...config, dataset: 'random-low' }, null, 2)}\n`);
  return parameters;
}
