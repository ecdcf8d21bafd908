// A map from test ids to small numbers, for TRX's id → definition between a file's two passes:
// vstest's ids are GUIDs, kept here as their 128 bits in a typed array (20 bytes a slot, off the
// JavaScript heap; a `Map` of GUID strings costs five times that); any other id in a `Map`.

const GUID = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})([0-9a-f]{8})$/i;
const WORDS = 5;

export class GuidMap {
  /** Open addressing: four words of the GUID, then the value + 1 (0 marks an empty slot). */
  private slots = new Uint32Array(WORDS * 1024);
  private size = 0;
  private readonly others = new Map<string, number>();

  private static words(id: string): [number, number, number, number] | null {
    const match = GUID.exec(id);
    if (!match) return null;
    const hex = (text: string) => Number.parseInt(text, 16) >>> 0;
    return [hex(match[1] as string), hex(`${match[2]}${match[3]}`), hex(`${match[4]}${match[5]}`), hex(match[6] as string)];
  }

  set(id: string, value: number): void {
    const words = GuidMap.words(id);
    if (!words) {
      // A copy: the reader's strings are slices of the chunk they were cut from.
      this.others.set(Buffer.from(id, 'utf8').toString('utf8'), value);
      return;
    }
    if ((this.size + 1) * 2 > this.slots.length / WORDS) this.grow();
    if (this.put(words, value + 1)) this.size++;
  }

  get(id: string): number | undefined {
    const words = GuidMap.words(id);
    if (!words) return this.others.get(id);
    const at = this.find(words);
    const stored = this.slots[at + 4] as number;
    return stored === 0 ? undefined : stored - 1;
  }

  /** The slot of the GUID, or the empty slot where it would go. */
  private find(words: [number, number, number, number]): number {
    const mask = this.slots.length / WORDS - 1;
    // Every word mixed in: GUIDs of one run may share words (sequential or hand-made ids).
    let hash = Math.imul(words[0] ^ Math.imul(words[1], 0x85ebca6b) ^ Math.imul(words[2], 0xc2b2ae35) ^ Math.imul(words[3], 0x27d4eb2f), 0x9e3779b1);
    hash ^= hash >>> 15;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = slot * WORDS;
      if (this.slots[at + 4] === 0) return at;
      if (this.slots[at] === words[0] && this.slots[at + 1] === words[1] && this.slots[at + 2] === words[2] && this.slots[at + 3] === words[3]) return at;
    }
  }

  /** True when the GUID was new. */
  private put(words: [number, number, number, number], stored: number): boolean {
    const at = this.find(words);
    const fresh = this.slots[at + 4] === 0;
    this.slots.set(words, at);
    this.slots[at + 4] = stored;
    return fresh;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    for (let at = 0; at < old.length; at += WORDS) {
      if (old[at + 4] !== 0) this.put([old[at] as number, old[at + 1] as number, old[at + 2] as number, old[at + 3] as number], old[at + 4] as number);
    }
  }
}
