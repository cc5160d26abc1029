// Every `ironflow` command, found by its words.
import type { Command } from '../command';
import { eventsCommand } from './events';
import { statusCommand } from './status';
import { credentialsCreateCommand, tenantsCreateCommand } from './tenants';

export const commands: Command[] = [statusCommand, eventsCommand, tenantsCreateCommand, credentialsCreateCommand];
