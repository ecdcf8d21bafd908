// Playwright colours error messages even with NO_COLOR; stored text must be plain.
const ANSI_PATTERN =
  // eslint-disable-next-line no-control-regex -- matching terminal control codes is the point
  /[\u001b\u009b][[\]()#;?]*(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007|(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~])/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, '');
}

/** Text as the server can store it: PostgreSQL text holds no NUL, so it becomes U+FFFD. */
export function storable(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** Output and error text as stored: plain, and storable. */
export function plainText(text: string): string {
  return storable(stripAnsi(text));
}
