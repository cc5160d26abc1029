// Label expressions (`when` of steps and host-config units): `nvswitch`, `gpu=h100`,
// `arch!=arm64`, combined with `!`, `&&`, `||` and parentheses. Pure: the workflow
// evaluates them against the machine's labels.
export type LabelExpr =
  | { kind: 'has'; name: string }
  | { kind: 'eq'; name: string; value: string; negate: boolean }
  | { kind: 'not'; expr: LabelExpr }
  | { kind: 'and' | 'or'; left: LabelExpr; right: LabelExpr };

const tokenPattern = /\s*(\(|\)|!=|!|&&|\|\||=|[A-Za-z0-9_.\-/]+)/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  tokenPattern.lastIndex = 0;
  let index = 0;
  while (index < text.length) {
    if (/^\s*$/.test(text.slice(index))) break;
    tokenPattern.lastIndex = index;
    const match = tokenPattern.exec(text);
    if (!match) throw new Error(`unexpected character at ${index}: "${text.slice(index, index + 8)}"`);
    tokens.push(match[1] as string);
    index = tokenPattern.lastIndex;
  }
  return tokens;
}

const isWord = (t: string | undefined): t is string => t !== undefined && /^[A-Za-z0-9_.\-/]+$/.test(t);

/** Parses an expression, throwing an Error whose message says what is wrong. */
export function parseLabelExpr(text: string): LabelExpr {
  if (text.length > 512) throw new Error('longer than 512 characters');
  const tokens = tokenize(text);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  function primary(): LabelExpr {
    const token = next();
    if (token === '!') return { kind: 'not', expr: primary() };
    if (token === '(') {
      const inner = or();
      if (next() !== ')') throw new Error('missing ")"');
      return inner;
    }
    if (!isWord(token)) throw new Error(token === undefined ? 'expression ends early' : `unexpected "${token}"`);
    const op = peek();
    if (op === '=' || op === '!=') {
      next();
      const value = next();
      if (!isWord(value)) throw new Error(`"${token}${op}" needs a value`);
      return { kind: 'eq', name: token, value, negate: op === '!=' };
    }
    return { kind: 'has', name: token };
  }
  function and(): LabelExpr {
    let left = primary();
    while (peek() === '&&') {
      next();
      left = { kind: 'and', left, right: primary() };
    }
    return left;
  }
  function or(): LabelExpr {
    let left = and();
    while (peek() === '||') {
      next();
      left = { kind: 'or', left, right: and() };
    }
    return left;
  }
  const expr = or();
  if (pos < tokens.length) throw new Error(`unexpected "${tokens[pos]}"`);
  return expr;
}

/** A bare name holds when the label exists and is not 'false'. */
export function evalLabelExpr(expr: LabelExpr, labels: Readonly<Record<string, string>>): boolean {
  switch (expr.kind) {
    case 'has':
      return expr.name in labels && labels[expr.name] !== 'false';
    case 'eq':
      return (labels[expr.name] === expr.value) !== expr.negate;
    case 'not':
      return !evalLabelExpr(expr.expr, labels);
    case 'and':
      return evalLabelExpr(expr.left, labels) && evalLabelExpr(expr.right, labels);
    case 'or':
      return evalLabelExpr(expr.left, labels) || evalLabelExpr(expr.right, labels);
  }
}

export function labelsMatch(text: string | undefined, labels: Readonly<Record<string, string>>): boolean {
  return text === undefined || evalLabelExpr(parseLabelExpr(text), labels);
}
