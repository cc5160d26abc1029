#!/usr/bin/env node
// The `ironflow` command. Runs the TypeScript sources through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
