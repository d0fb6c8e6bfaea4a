/**
 * Recognising Tile IR inside files of the generic `mlir` language (the
 * language another MLIR extension gives `*.mlir`).  No `vscode` import.
 */

/** How much of a document is looked at, in characters. */
export const SNIFF_CHARS = 64 * 1024;

const TILE_IR_MARKERS = /(?:^|[^\w.])(?:cuda_tile|nv_tileas)\.[A-Za-z_]/m;

/**
 * Whether `text` (the start of a document) holds cuda_tile or nv_tileas IR:
 * an op, type or attribute of one of these dialects (`cuda_tile.module`,
 * `!cuda_tile.tile<...>`, `"nv_tileas.xyz"`...).  A bare mention in a comment
 * counts too; it is a hint for the language mode, not a parse.
 */
export function looksLikeTileIR(text: string): boolean {
  return TILE_IR_MARKERS.test(text.length > SNIFF_CHARS ? text.slice(0, SNIFF_CHARS) : text);
}
