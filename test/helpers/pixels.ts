import assert from 'node:assert/strict';

/** A decoded pixel: red, green, blue (and alpha when decoded with it), 0 to 255. */
export type Pixel = readonly number[];

/** A decoded picture, as media.ts's frameRgb gives it. */
export interface Picture {
  width: number;
  height: number;
  pixel: (x: number, y: number) => Pixel;
}

// Colours as a decoder reads a fixture's solid colour back, with room for the encoders' rounding.
export const isBlack = ([r, g, b]: Pixel) => r! < 24 && g! < 24 && b! < 24;
export const isWhite = ([r, g, b]: Pixel) => r! > 230 && g! > 230 && b! > 230;
export const isRed = ([r, g, b]: Pixel) => r! > 200 && g! < 60 && b! < 60;
export const isGreen = ([r, g, b]: Pixel) => g! > 200 && r! < 60 && b! < 60;
export const isBlue = ([r, g, b]: Pixel) => b! > 180 && r! < 70 && g! < 70;
export const isYellow = ([r, g, b]: Pixel) => r! > 200 && g! > 200 && b! < 70;

/** Asserts a predicate on pixels, naming the first one that fails. */
export function assertPixels(
  frame: Picture,
  points: ReadonlyArray<readonly [number, number]>,
  test: (p: Pixel) => boolean,
  what: string,
): void {
  for (const [x, y] of points)
    assert.ok(test(frame.pixel(x, y)), `pixel ${x},${y} should be ${what}, is ${frame.pixel(x, y)}`);
}
