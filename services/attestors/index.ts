// The attestors the join path knows, by join-token role. Later issues add theirs here
// (discovery, provisioned).
import { refusal } from '../joins/refusal';
import { adoptAttestor } from './adopt-attestor';
import type { Attestor } from '../../core/attestors/attestor';
import { discoveryAttestor } from './discovery-attestor';
import { provisionedAttestor } from './provisioned-attestor';
import { siteAttestor } from './site-attestor';

const attestors = new Map<string, Attestor>([
  [siteAttestor.role, siteAttestor],
  [discoveryAttestor.role, discoveryAttestor],
  [provisionedAttestor.role, provisionedAttestor],
  [adoptAttestor.role, adoptAttestor],
]);

export function attestorFor(role: string): Attestor {
  const attestor = attestors.get(role);
  if (!attestor) throw refusal('UNSUPPORTED', 'no-attestor', `join tokens of role ${role} cannot join yet: no attestor for that role is installed`, { role });
  return attestor;
}

export type { Attestor, Admission, AttestationRequest, JoinTokenRecord } from '../../core/attestors/attestor';
