#!/usr/bin/env node
// The package bin: runs the TypeScript CLI through tsx, so there is no build step.
import { register } from 'tsx/esm/api';

register();
await import('../client/cli-main.ts');
