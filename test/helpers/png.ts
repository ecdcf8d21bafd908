import { inflateSync } from 'node:zlib';

export interface DecodedPng {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  pixels: Buffer;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function hasPngSignature(png: Buffer): boolean {
  return png.subarray(0, 8).equals(SIGNATURE);
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Decodes an 8-bit RGBA, non-interlaced PNG (what resvg writes). */
export function decodePng(png: Buffer): DecodedPng {
  if (!hasPngSignature(png)) throw new Error('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[9] !== 6) throw new Error(`unsupported PNG: bit depth ${data[8]}, colour type ${data[9]}`);
    }
    if (type === 'IDAT') idat.push(data);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * 4;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)] as number;
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x] as number;
      const left = x >= 4 ? (pixels[y * stride + x - 4] as number) : 0;
      const up = y > 0 ? (pixels[(y - 1) * stride + x] as number) : 0;
      const upLeft = x >= 4 && y > 0 ? (pixels[(y - 1) * stride + x - 4] as number) : 0;
      const predicted = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter] as number;
      pixels[y * stride + x] = (value + predicted) & 0xff;
    }
  }
  return { width, height, pixels };
}

/** Pixels that are near white and opaque: the badge's text, drawn white on colour. */
export function countTextPixels(image: DecodedPng, fromX: number, toX: number): number {
  let count = 0;
  for (let y = 0; y < image.height; y++) {
    for (let x = fromX; x < Math.min(toX, image.width); x++) {
      const i = (y * image.width + x) * 4;
      if (
        (image.pixels[i] as number) > 200 &&
        (image.pixels[i + 1] as number) > 200 &&
        (image.pixels[i + 2] as number) > 200 &&
        (image.pixels[i + 3] as number) > 200
      )
        count++;
    }
  }
  return count;
}
