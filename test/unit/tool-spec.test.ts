// The tool interface's promises, as properties: an approval rule never lets a
// call through whose path lands outside the folders it names, however the path
// is spelled; a bad definition stops the worker with the reason.
import fc from 'fast-check';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineSubAgent, defineTool } from '../../activities/tools/define-tool.js';
import { Toolset } from '../../activities/tools/toolset.js';
import { needsApproval, normalisePath, specProblem, type ApprovalRule } from '../../common/tool-spec.js';
import { BUILTIN_SPECS } from '../helpers/builtin-specs.js';
import { propertyParams } from '../helpers/property.js';

const segment = fc.constantFrom('tmp', 'notes', 'a.txt', '.', '..', '', 'tmpx', 'tmp.d', '...');
const pathLike = fc.array(segment, { minLength: 1, maxLength: 6 }).chain((parts) =>
  fc.constantFrom('/', '//', '\\').map((sep) => parts.join(sep)),
);

describe('approval rules', () => {
  it('unlessInside: a call goes through only when its path, resolved, lies inside a named folder', () => {
    const rule: ApprovalRule = { argument: 'path', unlessInside: ['tmp'] };
    fc.assert(
      fc.property(fc.oneof(pathLike, pathLike.map((p) => `/${p}`)), (p) => {
        const asked = needsApproval(rule, { path: p });
        // Where the path really lands, resolved against a workspace root.
        const landed = posix.resolve('/ws', p.replaceAll('\\', '/'));
        const inside = !p.startsWith('/') && !p.startsWith('\\') && landed.startsWith('/ws/tmp/');
        // Safety: never through when it lands outside.
        if (!asked) expect(inside).toBe(true);
        // And no needless asking: a path that never climbs out of the workspace and lands inside goes through.
        if (inside && normalisePath(p) !== null) expect(asked).toBe(false);
      }),
      propertyParams(),
    );
  });

  it('normalisePath agrees with node\'s resolution for every path that stays in the workspace', () => {
    fc.assert(
      fc.property(pathLike, (p) => {
        const ours = normalisePath(p);
        const landed = posix.relative('/ws', posix.resolve('/ws', p.replaceAll('\\', '/')));
        const climbs = landed === '..' || landed.startsWith('../');
        // Climbing out at any point is refused, even when a later segment comes back in.
        if (ours !== null) expect(ours).toBe(landed);
        if (climbs) expect(ours).toBeNull();
      }),
      propertyParams(),
    );
  });

  it('missing or non-string arguments need approval; ifMatches and anyOf compose', () => {
    const rule: ApprovalRule = { anyOf: [{ argument: 'path', unlessInside: ['tmp'] }, { argument: 'mode', ifMatches: '^force$' }] };
    expect(needsApproval(rule, {})).toBe(true);
    expect(needsApproval(rule, { path: 42 })).toBe(true);
    expect(needsApproval(rule, { path: 'tmp/x' })).toBe(false);
    expect(needsApproval(rule, { path: 'tmp/x', mode: 'force' })).toBe(true);
    expect(needsApproval(rule, { path: 'tmp' })).toBe(true);
    expect(needsApproval(true, {})).toBe(true);
    expect(needsApproval(false, { path: '/etc' })).toBe(false);
  });
});

describe('tool definitions', () => {
  const base = { description: 'd', parameters: { type: 'object' as const }, readOnly: true, run: async () => 'ok' };

  it('a bad definition is refused with the reason', () => {
    expect(() => defineTool({ ...base, name: 'has space' })).toThrow(/tool name "has space" must be 1-64 letters/);
    expect(() => defineTool({ ...base, name: 'w', readOnly: false, activity: { local: true } })).toThrow(/a local tool must be readOnly/);
    expect(() => defineTool({ ...base, name: 'r', needsApproval: { argument: 'p', ifMatches: '(' } })).toThrow(/ifMatches is not a regular expression/);
    expect(() => defineTool({ ...base, name: 'n', description: ' ' })).toThrow(/description is required/);
    expect(specProblem(BUILTIN_SPECS[0])).toBeNull();
  });

  it('a toolset refuses two tools of one name, and a sub-agent naming a tool nobody offers', () => {
    const a = defineTool({ ...base, name: 'dup', origin: 'module:a.ts' });
    const b = defineTool({ ...base, name: 'dup', origin: 'mcp:fs' });
    expect(() => new Toolset([a, b])).toThrow('two tools are named dup (module:a.ts and mcp:fs); rename one');
    const sub = defineSubAgent({ name: 'helper', description: 'd', parameters: { type: 'object' }, readOnly: true, subAgent: { taskArgument: 'q', tools: ['missing'], limits: { maxTurns: 2 } } });
    expect(() => new Toolset([a, sub])).toThrow('sub-agent tool helper gives its child missing, which this worker does not offer');
    expect(() => new Toolset([a]).only(['dup', 'nope'])).toThrow('AGENT_TOOLS names nope, which no tool source offers (offered: dup)');
  });

  it('every built-in spec passes the checks a deployment\'s tools pass', () => {
    for (const s of BUILTIN_SPECS) expect({ name: s.name, problem: specProblem(s) }).toEqual({ name: s.name, problem: null });
  });
});
