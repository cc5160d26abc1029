// Every workflow the control-plane worker serves. Workflow code is deterministic: it
// imports only @temporalio/workflow, core types and pure data.
export { systemCheck } from './system-check';
export { provision } from './provision';
export { siteBoot } from './site-boot';
export { nodeLifecycle } from './node-lifecycle';
export { agentCommand } from './agent-command';
export { metalBulk } from './metal-bulk';
