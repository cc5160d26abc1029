// The foreground commands (`ironflow agent site|node`): run until SIGINT or SIGTERM, then
// stop the agent cleanly.
export async function runUntilSignal(agent: { stop(): Promise<void>; log: { info(message: string, fields?: Record<string, unknown>): void } }): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      agent.log.info('stopping', { signal });
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await agent.stop();
}
