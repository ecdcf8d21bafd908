// The agent's log: where logs are collected, a JSON object a line, with pino's level numbers and
// field names, so that an agent's lines read as the server's do; on a person's terminal, a line of
// text each (time, level, message, fields). This package has no dependencies, pino included; the
// server's own pino logger fits this interface too.

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

export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Text for a person at a terminal, JSON for whatever collects the lines, unless `--log-format` says. */
export function logFormatFor(flag: string | undefined, isTTY: boolean): LogFormat {
  if (flag === 'json' || flag === 'text') return flag;
  return isTTY ? 'text' : 'json';
}

/** A field's value as a person reads it: bare when it is one word, quoted when it has spaces. */
function shown(value: unknown): string {
  const plain = serializable(value);
  if (typeof plain === 'string') return /^[^\s"=]+$/.test(plain) ? plain : JSON.stringify(plain);
  if (plain !== null && typeof plain === 'object') {
    if ('message' in plain && 'type' in plain) return JSON.stringify(`${String(plain.type)}: ${String(plain.message)}`);
    return JSON.stringify(plain);
  }
  return String(plain);
}

/** Writes `HH:MM:SS LEVEL message key=value …` lines at `level` and above to `out`. */
export function textLog(level: LogLevel, out: NodeJS.WritableStream, now: () => Date = () => new Date()): AgentLog {
  const write = (at: 'info' | 'warn', fields: Record<string, unknown>, message: string) => {
    if (LEVELS[at] < LEVELS[level]) return;
    const time = now().toTimeString().slice(0, 8);
    const pairs = Object.entries(fields)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => ` ${name}=${shown(value)}`)
      .join('');
    out.write(`${time} ${at.toUpperCase().padEnd(4)} ${message}${pairs}\n`);
  };
  return {
    info: (fields, message) => write('info', fields, message),
    warn: (fields, message) => write('warn', fields, message),
  };
}

/** The agent's log in `format`. */
export function agentLog(format: LogFormat, level: LogLevel, out: NodeJS.WritableStream): AgentLog {
  return format === 'text' ? textLog(level, out) : jsonLog(level, out);
}
