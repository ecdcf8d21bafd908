// The agent's log: a JSON object a line, with pino's level numbers and field names, so that an
// agent's lines read as the server's do wherever logs are collected. This package has no
// dependencies, pino included; the server's own pino logger fits this interface too.

export interface AgentLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity } as const;

export type LogLevel = keyof typeof LEVELS;

export function isLogLevel(name: string): name is LogLevel {
  return Object.hasOwn(LEVELS, name);
}

/** Errors as their class and message (JSON.stringify would write `{}`). */
function serializable(value: unknown): unknown {
  return value instanceof Error ? { type: value.name, message: value.message } : value;
}

/** Writes the lines at `level` and above to `out`. */
export function jsonLog(level: LogLevel, out: NodeJS.WritableStream): AgentLog {
  const write = (at: 'info' | 'warn', fields: Record<string, unknown>, message: string) => {
    if (LEVELS[at] < LEVELS[level]) return;
    const entries = Object.entries(fields).map(([name, value]) => [name, serializable(value)]);
    out.write(`${JSON.stringify({ level: LEVELS[at], time: Date.now(), service: 'proctor-agent', ...Object.fromEntries(entries), msg: message })}\n`);
  };
  return {
    info: (fields, message) => write('info', fields, message),
    warn: (fields, message) => write('warn', fields, message),
  };
}
