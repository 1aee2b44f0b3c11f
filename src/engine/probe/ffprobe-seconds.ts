/**
 * A duration as ffprobe reports it: `ticks` of 1/`rate` second, rounded to whole microseconds
 * (ffmpeg's AV_TIME_BASE), so facts read from headers equal ffprobe's exactly.
 */
export const ffprobeSeconds = (ticks: number, rate: number): number => Math.round((ticks * 1e6) / rate) / 1e6;
