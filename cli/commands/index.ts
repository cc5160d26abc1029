// Every `ironflow` command, found by its words.
import type { Command } from '../command';
import { agentRamdiskCommand, agentSiteCommand } from './agent';
import { agentJoinCommand, agentNodeCommand } from './agent-node';
import { batchCommands } from './batches';
import { credentialCommands } from './credentials';
import { devEmulateCommand } from './dev';
import { eventsCommand } from './events';
import { imageSignerCommands } from './image-signers';
import { imageCommands } from './images';
import { metalCommands } from './metal';
import { metalAdoptTokenCommand } from './metal-adopt';
import { metalMaintenanceCommand } from './metal-maintenance';
import { metalStatusCommand } from './metal-status';
import { poolCommands } from './pools';
import { siteTokenCommands } from './site-tokens';
import { siteCommands } from './sites';
import { profileCommands } from './profiles';
import { statusCommand } from './status';
import { tenantsCreateCommand } from './tenants';

export const commands: Command[] = [
  statusCommand,
  eventsCommand,
  tenantsCreateCommand,
  ...credentialCommands,
  ...imageCommands,
  ...imageSignerCommands,
  ...siteCommands,
  ...siteTokenCommands,
  ...poolCommands,
  ...profileCommands,
  agentSiteCommand,
  agentRamdiskCommand,
  agentJoinCommand,
  agentNodeCommand,
  ...metalCommands,
  metalMaintenanceCommand,
  metalAdoptTokenCommand,
  metalStatusCommand,
  ...batchCommands,
  devEmulateCommand,
];
