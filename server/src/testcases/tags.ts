/** `tags` as a comma-separated query value; `@smoke` and `smoke` alike. */
export function parseTagList(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean)
    .map((tag) => (tag.startsWith('@') ? tag : `@${tag}`));
}
