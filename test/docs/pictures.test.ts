// The README's pictures against the pages they show: each picture was shot by `npm run pictures`
// from the sources recorded in docs/pictures/manifest.json, and those sources have not changed since.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashesOf, type Manifest, MANIFEST, PICTURES, PICTURES_DIR, type Picture, REGENERATE, ROOT, sourcesOf } from '../../scripts/picture-sources.ts';

const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Manifest;

/** Why a picture is older than its page, in words that name it and the command that makes it again; null when it is not. */
function staleness(picture: Picture, recorded: Manifest): string | null {
  const shot = recorded.pictures[picture.file];
  if (!shot) return `docs/pictures/${picture.file} is not in the manifest: run \`${REGENERATE}\``;
  const now = hashesOf(sourcesOf(picture));
  const changed = [
    ...Object.keys(now).filter((file) => shot.sources[file] !== now[file]),
    ...Object.keys(shot.sources).filter((file) => !(file in now)),
  ].sort();
  if (changed.length === 0) return null;
  return `docs/pictures/${picture.file} is older than ${changed.join(', ')}: run \`${REGENERATE}\` and commit docs/pictures/`;
}

describe("the README's pictures", () => {
  it.each(PICTURES.map((picture) => [picture.file, picture] as const))(
    'when %s is read against the sources of its page, then none changed since it was shot',
    (_file, picture) => {
      expect(staleness(picture, manifest)).toBeNull();
    },
  );

  it('when a source of a page changes after its picture, then the picture is named stale with the command to make it again', () => {
    const [run] = PICTURES;
    const shot = manifest.pictures[run?.file as string] as Manifest['pictures'][string];
    const edited: Manifest = {
      ...manifest,
      pictures: { ...manifest.pictures, 'run.png': { ...shot, sources: { ...shot.sources, 'server/src/runs/page.tsx': '0'.repeat(64) } } },
    };
    expect(staleness(run as Picture, edited)).toBe(
      'docs/pictures/run.png is older than server/src/runs/page.tsx: run `npm run pictures` and commit docs/pictures/',
    );
  });

  it("when a page imports a dashboard module, then that module is among its sources; another feature's modules are not followed", () => {
    const sources = sourcesOf(PICTURES.find((picture) => picture.file === 'run.png') as Picture);
    expect(sources).toEqual(
      expect.arrayContaining(['server/src/dashboard/run-page.tsx', 'server/src/dashboard/components/page.tsx', 'server/src/dashboard/components/forms.tsx']),
    );
    expect(sources).toContain('server/src/runs/page.tsx');
    expect(sources).not.toContain('server/src/runs/branch.ts');
    // The stylesheet and what it @imports: the pictures show their rules.
    expect(sources).toEqual(expect.arrayContaining(['server/src/dashboard/client/styles/dashboard.css', 'server/src/dashboard/client/styles/tokens.css']));
  });

  it('when the pictures are listed, then each is a PNG under 300 kB of the width it was shot at, and the README shows the run page', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const picture of PICTURES) {
      const bytes = fs.readFileSync(path.join(PICTURES_DIR, picture.file));
      expect(bytes.subarray(1, 4).toString(), picture.file).toBe('PNG');
      expect(bytes.length, picture.file).toBeLessThan(300 * 1024);
      // The IHDR chunk: width at byte 16, big-endian.
      expect(bytes.readUInt32BE(16), picture.file).toBe(picture.width);
      expect(manifest.pictures[picture.file]?.width).toBe(picture.width);
    }
    expect(readme).toContain('](docs/pictures/run.png)');
  });
});
