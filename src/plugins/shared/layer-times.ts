import { Optional, Param, paramError } from '../../sdk.js';

/**
 * The time range of a layer over a video (a logo, a title): `start` (0) and `end` (the end of the
 * video), the same fields and the same refusal for every layer operation.
 */
export const layerTimeFields = (what: string) => ({
  start: Param.time({ default: 0, description: `When ${what} appears` }),
  end: Optional(Param.time({ description: `When ${what} goes (default: the end of the video)` })),
});

/** Seconds as the messages show them: at most three decimals. */
const seconds = (value: number): string => String(Math.round(value * 1000) / 1000);

/** Refuses an `end` at or before `start`, from the fields alone: a 400 before anything is downloaded. */
export function checkLayerTimes({ start, end }: { start: number; end?: number | undefined }): void {
  if (end !== undefined && end <= start)
    throw paramError(`Expected \`end\` (${seconds(end)} s) to be after \`start\` (${seconds(start)} s)`);
}
