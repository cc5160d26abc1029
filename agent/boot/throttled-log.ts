// Log lines caused by anyone on the provisioning network (DHCP packets, script fetches from
// unknown MACs) are bounded: a boot burst or a flood of forged MACs must not push everything
// else out of the log, nor fill the disk.
import type { AgentLog, LogLevel } from '../common/log';

export const LOG_LINES_PER_SECOND = 20;

/** One line per event up to LOG_LINES_PER_SECOND, then a count once the next second starts. */
export function throttledLog(log: AgentLog, level: LogLevel, message: string): (fields: Record<string, unknown>) => void {
  let second = 0;
  let logged = 0;
  let unlogged = 0;
  return (fields) => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) {
      if (unlogged > 0) log.log(level, `${message} (more than logged one by one)`, { unlogged, perSecond: LOG_LINES_PER_SECOND });
      second = now;
      logged = 0;
      unlogged = 0;
    }
    if (logged < LOG_LINES_PER_SECOND) {
      logged += 1;
      log.log(level, message, fields);
    } else unlogged += 1;
  };
}
