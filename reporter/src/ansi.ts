// Playwright colours error messages even with NO_COLOR; stored text must be plain.
// eslint-disable-next-line no-control-regex -- matching terminal control codes is the point
const ANSI_PATTERN = /[\u001b\u009b][[\]()#;?]*(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007|(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~])/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, '');
}
