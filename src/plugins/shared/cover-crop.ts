/**
 * The picture cut around its centre to the frame's shape, scaled to cover width x height, then cut to exactly that
 * size. The first cut keeps the scaled picture about the frame's size: scaled whole, a picture of another shape
 * would be larger by as much as it is longer (a 16x70 video covering 4096x4096 was 4096x17920 first). Both go by the
 * display aspect ratio (`sar`, `dar`), so an anamorphic picture is not squeezed; the scaled picture's longer side is
 * rounded up, so it never falls a pixel short of the frame. ffmpeg turns a rotated picture upright before the graph,
 * so a phone's portrait video is cropped as it is shown. Only the two validated numbers enter the graph.
 */
export const coverCrop = (width: number, height: number): string =>
  `crop=w='min(iw,ceil(ih*${width}/${height}/sar))':h='min(ih,ceil(iw*sar*${height}/${width}))',` +
  `scale=w='max(${width},ceil(${height}*dar))':h='max(${height},ceil(${width}/dar))',` +
  `crop=${width}:${height},setsar=1`;
