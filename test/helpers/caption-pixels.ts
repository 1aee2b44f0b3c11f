import type { frameRgb } from './media.js';

type Frame = Awaited<ReturnType<typeof frameRgb>>;
export type Point = { x: number; y: number };

/**
 * The burned-in caption's pixels on a dark test video (no channel above 64), every other pixel both ways: white
 * text, and the highlighted word in gold (#FFD700) or red (#FF0000). Anything this bright is the caption.
 */
export function captionPixels(frame: Frame): { white: Point[]; gold: Point[]; red: Point[] } {
  const found = { white: [] as Point[], gold: [] as Point[], red: [] as Point[] };
  for (let y = 0; y < frame.height; y += 2)
    for (let x = 0; x < frame.width; x += 2) {
      const [r, g, b] = frame.pixel(x, y);
      if (r > 200 && g > 200 && b > 200) found.white.push({ x, y });
      else if (r > 200 && g > 150 && b < 90) found.gold.push({ x, y });
      else if (r > 200 && g < 80 && b < 80) found.red.push({ x, y });
    }
  return found;
}

/** The mean x of some pixels: left of another word's mean, the word lit is the first one. */
export const meanX = (points: Point[]) => points.reduce((sum, p) => sum + p.x, 0) / points.length;

/** The smallest box around some pixels. */
export function extent(points: Point[]): { left: number; right: number; top: number; bottom: number } {
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  return { left: Math.min(...xs), right: Math.max(...xs), top: Math.min(...ys), bottom: Math.max(...ys) };
}
