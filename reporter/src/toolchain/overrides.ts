// Which environment variables a run's overrides may set: checked where a trigger arrives and
// again where the suite's environment is made.

/**
 * Variables that change how a runtime, the dynamic linker or a shell loads code: with them an
 * override would run code of the caller's choosing before any test, in every process of the suite.
 */
const LOADER_VARIABLE =
  /^(NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|NODE_V8_COVERAGE|LD_[A-Z_]+|DYLD_[A-Z_]+|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|PYTHON(PATH|STARTUP|HOME)|PERL5?(OPT|LIB)|RUBY(OPT|LIB)|GCONV_PATH|GIT_[A-Z_]+|npm_config_[A-Za-z_]+|NPM_CONFIG_[A-Z_]+|HOME|TMPDIR|PROCTOR_[A-Z_]+)$/;

/** Why an override of `name` is refused, or null when it is allowed. */
export function refusedOverride(name: string): string | null {
  if (!LOADER_VARIABLE.test(name)) return null;
  if (name.startsWith('PROCTOR_')) return `${name} is set by Proctor for the run's reporter and cannot be overridden`;
  if (name === 'HOME' || name === 'TMPDIR' || /^npm_config_/i.test(name)) return `${name} is set by Proctor for the runner and cannot be overridden`;
  return `${name} changes how a runtime loads code and cannot be overridden`;
}
