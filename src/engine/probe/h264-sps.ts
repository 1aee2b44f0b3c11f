/**
 * An H.264 sequence parameter set, read far enough for what ffprobe reports of a stream: size,
 * pixel format and profile. The input is untrusted: every read is bounds-checked and throws on a
 * short or malformed set, and the caller then leaves the file to ffprobe.
 */

/** Reads bits, most significant first, from a NAL unit's payload with emulation prevention removed. */
class BitReader {
  private bit = 0;

  constructor(private readonly bytes: Uint8Array) {}

  u(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i++) {
      const byte = this.bytes[this.bit >> 3];
      if (byte === undefined) throw new RangeError('SPS ends early');
      value = value * 2 + ((byte >> (7 - (this.bit & 7))) & 1);
      this.bit++;
    }
    return value;
  }

  /** Exp-Golomb, unsigned. */
  ue(): number {
    let zeros = 0;
    while (this.u(1) === 0) {
      if (++zeros > 31) throw new RangeError('SPS has an Exp-Golomb code longer than 32 bits');
    }
    return 2 ** zeros - 1 + this.u(zeros);
  }

  /** Exp-Golomb, signed. */
  se(): number {
    const code = this.ue();
    return code % 2 === 1 ? (code + 1) / 2 : -code / 2;
  }
}

/** A NAL unit's payload without its 0x000003 emulation prevention bytes. */
function rbsp(nal: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < nal.length; i++) {
    if (i >= 2 && nal[i] === 3 && nal[i - 1] === 0 && nal[i - 2] === 0) continue;
    out.push(nal[i]!);
  }
  return Uint8Array.from(out);
}

export interface SequenceParameters {
  width: number;
  height: number;
  /** ffmpeg's name of the pixel format its decoder outputs, e.g. `yuv420p`, `yuvj420p`, `yuv422p10le`. */
  pixFmt: string;
  /** ffmpeg's profile name, e.g. `High`, `Constrained Baseline`. */
  profile: string;
}

/** Profiles whose SPS carries chroma format and bit depth. */
const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

/** ffmpeg's names (libavcodec's profile table) of the profiles read here, by profile_idc. */
function profileName(profileIdc: number, constraints: number): string | undefined {
  const set1 = (constraints & 0x40) !== 0;
  const set3 = (constraints & 0x10) !== 0;
  switch (profileIdc) {
    case 66:
      return set1 ? 'Constrained Baseline' : 'Baseline';
    case 77:
      return 'Main';
    case 88:
      return 'Extended';
    case 100:
      return 'High';
    case 110:
      return set3 ? 'High 10 Intra' : 'High 10';
    case 122:
      return set3 ? 'High 4:2:2 Intra' : 'High 4:2:2';
    default:
      return undefined;
  }
}

function skipScalingList(bits: BitReader, size: number): void {
  let last = 8;
  let next = 8;
  for (let j = 0; j < size; j++) {
    if (next !== 0) next = (last + bits.se() + 256) % 256;
    last = next === 0 ? last : next;
  }
}

/**
 * The facts of one SPS NAL unit (header byte included), or undefined for what is not read here:
 * interlaced coding, monochrome or 4:4:4, depths other than 8 and 10 bits, the rarer profiles.
 */
export function readSequenceParameters(nal: Uint8Array): SequenceParameters | undefined {
  if (nal.length < 4 || (nal[0]! & 0x1f) !== 7) return undefined;
  const bits = new BitReader(rbsp(nal.subarray(1)));
  const profileIdc = bits.u(8);
  const constraints = bits.u(8);
  bits.u(8); // level
  bits.ue(); // seq_parameter_set_id
  const profile = profileName(profileIdc, constraints);
  if (!profile) return undefined;
  let chroma = 1;
  let depth = 8;
  if (HIGH_PROFILES.has(profileIdc)) {
    chroma = bits.ue();
    if (chroma === 3) return undefined;
    depth = bits.ue() + 8;
    if (bits.ue() + 8 !== depth) return undefined; // chroma depth unlike luma's
    bits.u(1); // qpprime_y_zero_transform_bypass
    if (bits.u(1)) {
      for (let i = 0; i < 8; i++) if (bits.u(1)) skipScalingList(bits, i < 6 ? 16 : 64);
    }
  }
  if ((chroma !== 1 && chroma !== 2) || (depth !== 8 && depth !== 10)) return undefined;
  bits.ue(); // log2_max_frame_num_minus4
  const pocType = bits.ue();
  if (pocType === 0) bits.ue();
  else if (pocType === 1) {
    bits.u(1);
    bits.se();
    bits.se();
    const cycle = bits.ue();
    for (let i = 0; i < cycle; i++) bits.se();
  }
  bits.ue(); // max_num_ref_frames
  bits.u(1); // gaps_in_frame_num_allowed
  const widthInMbs = bits.ue() + 1;
  const heightInMapUnits = bits.ue() + 1;
  if (!bits.u(1)) return undefined; // fields, not frames: ffprobe's answers depend on more than this
  bits.u(1); // direct_8x8_inference
  let [left, right, top, bottom] = [0, 0, 0, 0];
  if (bits.u(1)) [left, right, top, bottom] = [bits.ue(), bits.ue(), bits.ue(), bits.ue()];
  // Crop units for 4:2:0 are two pixels both ways; for 4:2:2 two across and one down.
  const width = widthInMbs * 16 - 2 * (left + right);
  const height = heightInMapUnits * 16 - (chroma === 1 ? 2 : 1) * (top + bottom);
  if (width <= 0 || height <= 0) return undefined;
  let fullRange = false;
  if (bits.u(1)) {
    if (bits.u(1) && bits.u(8) === 255) bits.u(32); // aspect_ratio_idc, and an explicit SAR
    if (bits.u(1)) bits.u(1); // overscan
    if (bits.u(1)) {
      bits.u(3); // video_format
      fullRange = bits.u(1) === 1;
    }
  }
  const sampling = chroma === 1 ? '420' : '422';
  // ffmpeg's decoder names full-range 8-bit output with the JPEG (yuvj) formats.
  const pixFmt = depth === 10 ? `yuv${sampling}p10le` : `yuv${fullRange ? 'j' : ''}${sampling}p`;
  return { width, height, pixFmt, profile };
}
