// The step kinds a site agent runs: the registry's steps served on `site` (core/steps): its
// profile steps (power.setPower, management.setBootDevice, boot.*, inspect.oob, media.eject)
// and the command kinds role-restricted to `site` (spec 001, "The site agent"). The worker
// registers exactly these; any other activity sent to its queue is refused.
import { stepsServedOn, type StepsOf } from '../../core/steps/builtin';

export const SITE_STEP_KINDS = stepsServedOn('site');

export type SiteStepKind = StepsOf<'site'>;

export const isSiteStepKind = (name: string): name is SiteStepKind => (SITE_STEP_KINDS as readonly string[]).includes(name);
