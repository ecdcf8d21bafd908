// eslint-disable-next-line no-control-regex -- matching terminal colour codes is the point
const ANSI = /\u001b\[[0-9;]*m/g;

/** An error's text without the colour codes Playwright puts in it (with NO_COLOR too). */
export function withoutColour(text: string): string {
  return text.replace(ANSI, '');
}
