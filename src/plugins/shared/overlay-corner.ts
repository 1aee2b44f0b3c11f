/**
 * Where a picture drawn over a video goes (overlay-image's logo, a render's overlays and waveforms): a corner or the
 * centre, or the middle of the top or bottom edge.
 */

/** The positions a logo takes. */
export const OVERLAY_POSITIONS = ['top-right', 'top-left', 'bottom-left', 'bottom-right', 'center'] as const;
export type OverlayPosition = (typeof OVERLAY_POSITIONS)[number];

/**
 * The picture's top-left corner as overlay's expressions: `main_w`/`main_h` are the video's size and
 * `overlay_w`/`overlay_h` the picture's, so only the margin, a number, comes from the fields.
 */
export function corner(position: OverlayPosition | 'top' | 'bottom', margin: number): [x: string, y: string] {
  const right = `main_w-overlay_w-${margin}`;
  const bottom = `main_h-overlay_h-${margin}`;
  const middle = '(main_w-overlay_w)/2';
  const spots: Record<OverlayPosition | 'top' | 'bottom', [string, string]> = {
    'top-left': [String(margin), String(margin)],
    'top-right': [right, String(margin)],
    'bottom-left': [String(margin), bottom],
    'bottom-right': [right, bottom],
    center: [middle, '(main_h-overlay_h)/2'],
    top: [middle, String(margin)],
    bottom: [middle, bottom],
  };
  return spots[position];
}
