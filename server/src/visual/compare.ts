import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';

// How much of a screenshot changed, as Playwright's own comparison counts it: pixelmatch's YIQ
// distance with Playwright's default threshold (0.2), images of different sizes padded with
// transparent pixels to the larger size, anti-aliased pixels not counted.

/** Playwright's default `threshold` of `toHaveScreenshot`. */
export const PLAYWRIGHT_THRESHOLD = 0.2;
/** At most this many areas are kept per change, the largest. */
const MAX_BOXES = 20;
/** Changed pixels closer than a cell of this size belong to one area. */
const CELL = 16;

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Comparison {
  width: number;
  height: number;
  sizeChanged: boolean;
  changedPixels: number;
  /** Changed pixels over the baseline's pixels, as Playwright's ratio (0 to 1, not rounded). */
  changedRatio: number;
  boxes: Box[];
}

function padded(image: PNG, width: number, height: number): Uint8Array {
  if (image.width === width && image.height === height) return image.data;
  const out = new Uint8Array(width * height * 4);
  for (let y = 0; y < image.height; y++) out.set(image.data.subarray(y * image.width * 4, (y + 1) * image.width * 4), y * width * 4);
  return out;
}

/** Compares the baseline with the new screenshot (both PNG bytes); throws when either is no PNG. */
export function compareScreenshots(expectedPng: Buffer, actualPng: Buffer, threshold = PLAYWRIGHT_THRESHOLD): Comparison {
  const expected = PNG.sync.read(expectedPng);
  const actual = PNG.sync.read(actualPng);
  const width = Math.max(expected.width, actual.width);
  const height = Math.max(expected.height, actual.height);
  const mask = new Uint8Array(width * height * 4);
  const changedPixels = pixelmatch(padded(expected, width, height), padded(actual, width, height), mask, width, height, {
    threshold,
    diffMask: true,
    diffColor: [255, 0, 0],
    aaColor: [0, 0, 255],
  });
  return {
    width,
    height,
    sizeChanged: expected.width !== actual.width || expected.height !== actual.height,
    changedPixels,
    changedRatio: Math.min(1, changedPixels / (expected.width * expected.height)),
    boxes: changedAreas(mask, width, height),
  };
}

/**
 * The bounding boxes of the changed areas: changed pixels (red in the mask) gathered into cells,
 * neighbouring cells into one area, largest first.
 */
function changedAreas(mask: Uint8Array, width: number, height: number): Box[] {
  const columns = Math.ceil(width / CELL);
  const rows = Math.ceil(height / CELL);
  // Per cell: the bounds of its changed pixels, or none.
  const cells = new Map<number, Box & { right: number; bottom: number }>();
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 4;
      if (mask[at + 3] === 0 || mask[at] !== 255 || mask[at + 2] !== 0) continue;
      const cell = Math.floor(y / CELL) * columns + Math.floor(x / CELL);
      const bounds = cells.get(cell);
      if (!bounds) cells.set(cell, { x, y, width: 1, height: 1, right: x, bottom: y });
      else {
        bounds.x = Math.min(bounds.x, x);
        bounds.y = Math.min(bounds.y, y);
        bounds.right = Math.max(bounds.right, x);
        bounds.bottom = Math.max(bounds.bottom, y);
      }
    }
  }
  const seen = new Set<number>();
  const areas: (Box & { pixels: number })[] = [];
  for (const start of cells.keys()) {
    if (seen.has(start)) continue;
    seen.add(start);
    const stack = [start];
    let [left, top, right, bottom, count] = [Infinity, Infinity, -1, -1, 0];
    while (stack.length > 0) {
      const cell = stack.pop() as number;
      const bounds = cells.get(cell) as Box & { right: number; bottom: number };
      left = Math.min(left, bounds.x);
      top = Math.min(top, bounds.y);
      right = Math.max(right, bounds.right);
      bottom = Math.max(bottom, bounds.bottom);
      count++;
      const column = cell % columns;
      const row = Math.floor(cell / columns);
      for (const [dx, dy] of [
        [-1, 0],
        [1, 0],
        [0, -1],
        [0, 1],
        [-1, -1],
        [1, 1],
        [-1, 1],
        [1, -1],
      ] as const) {
        const nx = column + dx;
        const ny = row + dy;
        if (nx < 0 || ny < 0 || nx >= columns || ny >= rows) continue;
        const next = ny * columns + nx;
        if (cells.has(next) && !seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
    }
    areas.push({ x: left, y: top, width: right - left + 1, height: bottom - top + 1, pixels: count });
  }
  return areas
    .sort((a, b) => b.width * b.height - a.width * a.height)
    .slice(0, MAX_BOXES)
    .map(({ x, y, width: w, height: h }) => ({ x, y, width: w, height: h }));
}
