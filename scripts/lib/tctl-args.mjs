// tctl's command line (tctl v1.18, the `workflow signal|query|show|list|describe` forms a
// runbook uses) translated into the equivalent `temporal` command line. Pure: no I/O, so
// scripts/tctl-compat.mjs only runs what this decides.

/**
 * @typedef {{ names: string[], to?: string, bool?: boolean, repeat?: boolean, as?: string }} FlagSpec
 *   names: tctl's long name first, then its aliases (Go flag parsing: `-x` and `--x` alike);
 *   to: the `temporal` flag it becomes; as: a key the command's own translation reads instead.
 * @typedef {{ argv: string[], outputFile?: string }} Translation
 */

/** A refusal: the message names what was not understood and the `temporal` form to use. */
export class TctlUsageError extends Error {}

const DEFAULT_ADDRESS = '127.0.0.1:7233';

/** @type {FlagSpec[]} */
const GLOBAL_FLAGS = [
  { names: ['address', 'ad'], as: 'address' },
  { names: ['namespace', 'ns'], as: 'namespace' },
  { names: ['context_timeout', 'ct'], as: 'contextTimeout' },
  { names: ['tls_cert_path'], to: '--tls-cert-path' },
  { names: ['tls_key_path'], to: '--tls-key-path' },
  { names: ['tls_ca_path'], to: '--tls-ca-path' },
  { names: ['tls_server_name'], to: '--tls-server-name' },
  { names: ['tls_disable_host_verification'], to: '--tls-disable-host-verification', bool: true },
];

const workflowId = { names: ['workflow_id', 'wid', 'w'], to: '--workflow-id' };
const runId = { names: ['run_id', 'rid', 'r'], to: '--run-id' };
const output = { names: ['output', 'o'], as: 'output' };

/**
 * The supported subcommands: tctl's flags for each and the `temporal workflow` command they
 * become. `required` lists flag groups of which one must be given (named in tctl's words).
 * @type {Record<string, { temporal: string, flags: FlagSpec[], required: Array<{ any: string[], say: string }>, defaultOutput?: string }>}
 */
const COMMANDS = {
  signal: {
    temporal: 'signal',
    flags: [
      workflowId,
      runId,
      { names: ['name', 'n'], to: '--name' },
      { names: ['input', 'i'], to: '--input', repeat: true },
      { names: ['input_file', 'if'], to: '--input-file' },
      { names: ['query', 'q'], to: '--query' },
      { names: ['reason'], to: '--reason' },
      { names: ['yes'], to: '--yes', bool: true },
    ],
    required: [
      { any: ['--workflow-id', '--query'], say: '-w/--workflow_id (or -q/--query for a batch)' },
      { any: ['--name'], say: '-n/--name' },
    ],
  },
  query: {
    temporal: 'query',
    flags: [
      workflowId,
      runId,
      // tctl names the query type --query_type/--qt; -q/--query is accepted too, since this
      // command has no list filter for it to mean.
      { names: ['query_type', 'qt', 'query', 'q'], to: '--type' },
      { names: ['input', 'i'], to: '--input', repeat: true },
      { names: ['input_file', 'if'], to: '--input-file' },
      { names: ['query_reject_condition', 'qrc'], to: '--reject-condition' },
      output,
    ],
    required: [
      { any: ['--workflow-id'], say: '-w/--workflow_id' },
      { any: ['--type'], say: '--qt/--query_type' },
    ],
  },
  show: {
    temporal: 'show',
    flags: [workflowId, runId, { names: ['print_full', 'pf'], to: '--detailed', bool: true }, { names: ['output_filename', 'of'], as: 'outputFile' }, output],
    required: [{ any: ['--workflow-id'], say: '-w/--workflow_id' }],
  },
  describe: {
    temporal: 'describe',
    flags: [
      workflowId,
      runId,
      { names: ['print_raw', 'praw'], to: '--raw', bool: true },
      { names: ['reset_points_only'], to: '--reset-points', bool: true },
      output,
    ],
    required: [{ any: ['--workflow-id'], say: '-w/--workflow_id' }],
    // tctl printed the description as JSON; scripts reading it keep working.
    defaultOutput: 'json',
  },
  list: {
    temporal: 'list',
    flags: [
      { names: ['query', 'q'], to: '--query' },
      { names: ['open', 'op'], as: 'open', bool: true },
      { names: ['workflow_id', 'wid', 'w'], as: 'workflowId' },
      { names: ['workflow_type', 'wt'], as: 'workflowType' },
      { names: ['status', 's'], as: 'status' },
      { names: ['more', 'm'], as: 'more', bool: true },
      { names: ['pagesize', 'ps'], as: 'pageSize' },
      { names: ['print_json', 'pjson'], as: 'printJson', bool: true },
      output,
    ],
    required: [],
  },
};

/** @type {Record<string, string | undefined>} */
const COMMAND_ALIASES = { s: 'signal', desc: 'describe', l: 'list' };

/** @type {Record<string, string | undefined>} Where tctl's other commands went in `temporal`, for the refusal's hint. */
const OTHER_WORKFLOW_COMMANDS = {
  start: 'temporal workflow start',
  run: 'temporal workflow execute',
  cancel: 'temporal workflow cancel',
  c: 'temporal workflow cancel',
  terminate: 'temporal workflow terminate',
  term: 'temporal workflow terminate',
  reset: 'temporal workflow reset',
  'reset-batch': 'temporal workflow reset --query',
  stack: 'temporal workflow stack',
  count: 'temporal workflow count',
  cnt: 'temporal workflow count',
  listall: 'temporal workflow list',
  la: 'temporal workflow list',
  scan: 'temporal workflow list',
  listarchived: 'temporal workflow list --archived',
  showid: 'temporal workflow show --workflow-id <id>',
  describeid: 'temporal workflow describe --workflow-id <id>',
  descid: 'temporal workflow describe --workflow-id <id>',
  observe: 'temporal workflow show --follow',
  ob: 'temporal workflow show --follow',
  observeid: 'temporal workflow show --follow --workflow-id <id>',
  obid: 'temporal workflow show --follow --workflow-id <id>',
};
/** @type {Record<string, string | undefined>} */
const OTHER_COMMANDS = {
  namespace: 'temporal operator namespace',
  n: 'temporal operator namespace',
  activity: 'temporal activity',
  act: 'temporal activity',
  taskqueue: 'temporal task-queue',
  tq: 'temporal task-queue',
  schedule: 'temporal schedule',
  batch: 'temporal batch',
  admin: 'temporal operator',
  adm: 'temporal operator',
  cluster: 'temporal operator cluster',
  cl: 'temporal operator cluster',
};

/** @type {Record<string, string | undefined>} tctl's --status values and the ExecutionStatus each lists. */
const STATUSES = {
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Canceled',
  terminated: 'Terminated',
  continuedasnew: 'ContinuedAsNew',
  timedout: 'TimedOut',
};

export const USAGE = `tctl (compatibility command: runs the same request through \`temporal\`)

  tctl [--address HOST:PORT] [--ns NAMESPACE] workflow <command> [flags]

  workflow signal    -w ID [-r RUN] -n NAME [-i JSON]     temporal workflow signal
  workflow query     -w ID [-r RUN] --qt TYPE [-i JSON]   temporal workflow query --type
  workflow show      -w ID [-r RUN] [--of FILE]           temporal workflow show
  workflow list      [-q QUERY] [--op] [--more]           temporal workflow list
  workflow describe  -w ID [-r RUN]                       temporal workflow describe

  --address defaults to $TEMPORAL_CLI_ADDRESS, else ${DEFAULT_ADDRESS};
  --ns to $TEMPORAL_CLI_NAMESPACE, else default. --output json where temporal has it.
  Anything else: use \`temporal\` itself (temporal --help).
`;

/**
 * @param {string[]} args tctl's arguments (without the program name)
 * @param {Record<string, string | undefined>} env for TEMPORAL_CLI_ADDRESS / TEMPORAL_CLI_NAMESPACE
 * @returns {Translation | 'help'}
 */
export function translateTctl(args, env) {
  const globals = parseFlags(args, GLOBAL_FLAGS, { stopAtPositional: true, where: 'tctl' });
  const [group, sub, ...rest] = globals.positional;
  if (group === undefined || group === 'help' || globals.help) return 'help';
  if (group !== 'workflow' && group !== 'wf') {
    const instead = OTHER_COMMANDS[group];
    throw new TctlUsageError(
      `\`tctl ${group}\` is not supported by this compatibility command; use ${instead ? `\`${instead}\`` : '`temporal` itself'} (see \`temporal --help\`)`,
    );
  }
  if (sub === undefined || sub === 'help') return 'help';
  const name = COMMAND_ALIASES[sub] ?? sub;
  const command = COMMANDS[name];
  if (!command) {
    const instead = OTHER_WORKFLOW_COMMANDS[sub];
    throw new TctlUsageError(
      `\`tctl workflow ${sub}\` is not supported by this compatibility command; use ${instead ? `\`${instead}\`` : '`temporal workflow`'} (see \`temporal workflow --help\`)`,
    );
  }
  // Global flags are accepted after the subcommand too (no subcommand flag shares their names).
  const parsed = parseFlags(rest, [...command.flags, ...GLOBAL_FLAGS], {
    stopAtPositional: false,
    where: `tctl workflow ${name}`,
    temporal: `temporal workflow ${command.temporal}`,
  });
  if (parsed.help) return 'help';
  if (parsed.positional.length > 0) {
    throw new TctlUsageError(
      `\`tctl workflow ${name}\` takes no argument ${JSON.stringify(parsed.positional[0])}; name the workflow with -w (the \`temporal\` equivalent: \`temporal workflow ${command.temporal} --workflow-id <id>\`)`,
    );
  }
  const values = { ...globals.values, ...parsed.values };
  const argv = ['workflow', command.temporal, ...globals.argv, ...parsed.argv];
  if (name === 'list') argv.push(...listArgs(values, parsed.given.has('--query')));
  for (const need of command.required) {
    if (!need.any.some((flag) => parsed.given.has(flag)))
      throw new TctlUsageError(`\`tctl workflow ${name}\` needs ${need.say} (the \`temporal\` equivalent: \`temporal workflow ${command.temporal} --help\`)`);
  }
  const format = outputFormat(values, command.defaultOutput);
  if (format) argv.push('--output', format);
  argv.push('--address', values.address ?? nonEmpty(env.TEMPORAL_CLI_ADDRESS) ?? DEFAULT_ADDRESS);
  argv.push('--namespace', values.namespace ?? nonEmpty(env.TEMPORAL_CLI_NAMESPACE) ?? 'default');
  if (values.contextTimeout !== undefined) argv.push('--command-timeout', `${positiveInt(values.contextTimeout, '--context_timeout')}s`);
  if (values.outputFile !== undefined) {
    // tctl wrote the history as JSON to the file.
    if (!format) argv.push('--output', 'json');
    return { argv, outputFile: values.outputFile };
  }
  return { argv };
}

/**
 * Go-style flags: `-x v`, `--x v`, `-x=v`, `--x=v`; booleans take no value (or `=true|false`).
 * @param {string[]} args
 * @param {FlagSpec[]} specs
 * @param {{ stopAtPositional: boolean, where: string, temporal?: string }} options
 */
function parseFlags(args, specs, options) {
  /** @type {string[]} */
  const argv = [];
  /** @type {string[]} */
  const positional = [];
  /** @type {Record<string, string>} */
  const values = {};
  /** @type {Set<string>} the `temporal` flags given */
  const given = new Set();
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = /** @type {string} */ (args[i]);
    if (!arg.startsWith('-') || arg === '-') {
      if (options.stopAtPositional) return { argv, positional: [...positional, ...args.slice(i)], values, given, help };
      positional.push(arg);
      continue;
    }
    if (arg === '--') {
      positional.push(...args.slice(i + 1));
      break;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const flag = eq === -1 ? body : body.slice(0, eq);
    const written = eq === -1 ? arg : arg.slice(0, arg.indexOf('='));
    if (flag === 'h' || flag === 'help') {
      help = true;
      continue;
    }
    const spec = specs.find((s) => s.names.includes(flag));
    if (!spec) {
      const instead = options.temporal ? `\`${options.temporal}\` (see \`${options.temporal} --help\`)` : '`temporal` itself (see `temporal --help`)';
      throw new TctlUsageError(`\`${options.where}\` has no flag ${written} in this compatibility command; use ${instead}`);
    }
    let value;
    if (spec.bool) {
      value = eq === -1 ? 'true' : body.slice(eq + 1);
      if (value !== 'true' && value !== 'false') throw new TctlUsageError(`${written} is true or false, not ${JSON.stringify(value)}`);
      if (value === 'false') continue;
    } else if (eq !== -1) {
      value = body.slice(eq + 1);
    } else {
      value = args[++i];
      if (value === undefined) throw new TctlUsageError(`${written} needs a value (in \`${options.where}\`)`);
    }
    if (spec.as) {
      values[spec.as] = value;
      continue;
    }
    const to = /** @type {string} */ (spec.to);
    if (given.has(to) && !spec.repeat) throw new TctlUsageError(`${written} is given twice (in \`${options.where}\`)`);
    given.add(to);
    argv.push(...(spec.bool ? [to] : [to, value]));
  }
  return { argv, positional, values, given, help };
}

/**
 * tctl's list: one page (10, or --pagesize) unless --more; without -q its filter flags make
 * the visibility query, closed executions unless --open.
 * @param {Record<string, string>} values
 * @param {boolean} hasQuery
 */
function listArgs(values, hasQuery) {
  const args = [];
  if (!hasQuery) {
    const clauses = [];
    if (values.status !== undefined) {
      const status = STATUSES[values.status.toLowerCase()];
      if (!status) throw new TctlUsageError(`--status is one of ${Object.keys(STATUSES).join(', ')}, not ${JSON.stringify(values.status)}`);
      clauses.push(`ExecutionStatus = "${status}"`);
    } else {
      clauses.push(values.open === 'true' ? 'ExecutionStatus = "Running"' : 'ExecutionStatus != "Running"');
    }
    if (values.workflowId !== undefined) clauses.push(`WorkflowId = ${quoted(values.workflowId, '--workflow_id')}`);
    if (values.workflowType !== undefined) clauses.push(`WorkflowType = ${quoted(values.workflowType, '--workflow_type')}`);
    args.push('--query', clauses.join(' AND '));
  }
  if (values.more !== 'true') args.push('--limit', String(values.pageSize === undefined ? 10 : positiveInt(values.pageSize, '--pagesize')));
  return args;
}

/**
 * @param {Record<string, string>} values
 * @param {string | undefined} fallback
 */
function outputFormat(values, fallback) {
  if (values.printJson === 'true') return 'json';
  const wanted = values.output;
  if (wanted === undefined) return fallback;
  if (wanted === 'json') return 'json';
  if (wanted === 'table' || wanted === 'card' || wanted === 'text') return 'text';
  throw new TctlUsageError(`--output is json, table or card, not ${JSON.stringify(wanted)}`);
}

/** @param {string} value @param {string} flag */
function quoted(value, flag) {
  if (/["\\]/.test(value)) throw new TctlUsageError(`${flag} ${JSON.stringify(value)} holds a quote or backslash; write the filter with -q instead`);
  return `"${value}"`;
}

/** @param {string} value @param {string} flag */
function positiveInt(value, flag) {
  if (!/^[1-9][0-9]{0,8}$/.test(value)) throw new TctlUsageError(`${flag} is a positive whole number, not ${JSON.stringify(value)}`);
  return Number(value);
}

/** @param {string | undefined} value */
function nonEmpty(value) {
  return value === undefined || value === '' ? undefined : value;
}
