// node:util parseArgs with one difference: a value that starts with "-" and a
// digit (`--max-turns -3`, `--budget -1`, `--limit -.5`) is the flag's value.
// parseArgs reads it as an option and answers "argument is ambiguous", which
// names neither the flag nor what is wrong; taken as a value, the flag's own
// check refuses it in words ("--max-turns must be a positive whole number").
import { parseArgs, type ParseArgsConfig } from 'node:util';

const NEGATIVE_NUMBER = /^-\.?\d/;

export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const options = config.options ?? {};
  const takesValue = (arg: string) => arg.startsWith('--') && options[arg.slice(2)]?.type === 'string';
  const args = config.args ?? [];
  const joined: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    // After "--" everything is a positional: leave it as it is.
    if (arg === '--') {
      joined.push(...args.slice(i));
      break;
    }
    const next = args[i + 1];
    if (takesValue(arg) && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      joined.push(`${arg}=${next}`);
      i += 1;
    } else joined.push(arg);
  }
  return parseArgs<T>({ ...config, args: joined });
}
