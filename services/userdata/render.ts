// Renders a node's first-boot document: the named template (a custom one first, then the
// shipped ones) with the checked variables. Both shipped templates build their documents
// from objects; custom string templates get {{name}} substitution of single-line values.
import { z } from 'zod';
import { IronflowError, fromZodError } from '../../core/errors';
import { CLOUD_INIT_TEMPLATE, renderCloudInit } from './cloud-init';
import { PLACEHOLDER, type UserDataConfig, type UserDataTemplate } from '../../core/userdata/config';
import { IGNITION_TEMPLATE, renderIgnition } from '../../core/userdata/ignition';
import {
  agentSha256Schema,
  agentUrlSchema,
  controlPlaneUrlSchema,
  hostnameOf,
  joinTokenSchema,
  nodeIdSchema,
  pinsSchema,
  type UserDataVariables,
} from '../../core/userdata/values';

export const shippedTemplates: Record<string, { kind: string; render: (vars: UserDataVariables) => string }> = {
  [CLOUD_INIT_TEMPLATE]: { kind: 'cloud-init', render: renderCloudInit },
  [IGNITION_TEMPLATE]: { kind: 'ignition', render: renderIgnition },
};

/** The template a kind uses when the profile names none. No template ships for talos: bring your own. */
export const defaultTemplateOf: Record<string, string> = { 'cloud-init': CLOUD_INIT_TEMPLATE, ignition: IGNITION_TEMPLATE };

export const userDataKindSchema = z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'a user data kind is lower-case, e.g. cloud-init, ignition, talos');

const variablesSchema = z.object({
  nodeId: nodeIdSchema,
  joinToken: joinTokenSchema,
  controlPlaneUrl: controlPlaneUrlSchema,
  agentUrl: agentUrlSchema,
  agentSha256: agentSha256Schema,
  pins: pinsSchema.optional(),
});

export type RenderVariablesInput = { nodeId: string; joinToken: string } & Partial<Pick<UserDataConfig, 'controlPlaneUrl' | 'agentUrl' | 'agentSha256'>> & {
    pins?: Partial<Record<'servingCaPin' | 'joinSigningPin' | 'joinEncryptionPin', string>>;
  };

export interface RenderedUserData {
  kind: string;
  template: string;
  /** Contains the join token: store it in the secret store, never log or return it. */
  document: string;
}

function variablesOf(input: RenderVariablesInput): UserDataVariables {
  for (const field of ['controlPlaneUrl', 'agentUrl', 'agentSha256'] as const) {
    if (input[field] === undefined) {
      throw new IronflowError(
        'INVALID_CONFIG',
        `userData.${field} is not configured; user data cannot be rendered without the control plane URL, the agent URL and its sha256`,
        { path: `userData.${field}` },
      );
    }
  }
  const result = variablesSchema.safeParse(input);
  if (!result.success) throw fromZodError(result.error, 'INVALID_CONFIG');
  const { pins, ...rest } = result.data;
  return { ...rest, hostname: hostnameOf(rest.nodeId), ...(pins ?? {}) };
}

function substitute(template: string, vars: UserDataVariables, name: string): string {
  const values = vars as unknown as Record<string, string | undefined>;
  return template.replace(PLACEHOLDER, (_whole, placeholder: string) => {
    const value = Object.hasOwn(values, placeholder) ? values[placeholder] : undefined;
    if (value === undefined)
      throw new IronflowError('INVALID_CONFIG', `template ${name}: placeholder {{${placeholder}}} has no value`, { path: `userData.templates.${name}` });
    return value;
  });
}

function renderCustom(template: UserDataTemplate, vars: UserDataVariables, name: string): string {
  if (typeof template === 'string') return substitute(template, vars, name);
  const document = template(Object.freeze({ ...vars }));
  if (typeof document !== 'string') throw new IronflowError('INVALID_CONFIG', `template ${name} returned no string`, { path: `userData.templates.${name}` });
  return document;
}

/**
 * Renders user data of `kind` for one node. The template is options.template (custom
 * templates first, then the shipped ones), else the kind's shipped template.
 */
export function renderUserData(
  kind: string,
  input: RenderVariablesInput,
  options: { template?: string; templates?: Record<string, UserDataTemplate> } = {},
): RenderedUserData {
  const kindResult = userDataKindSchema.safeParse(kind);
  if (!kindResult.success) throw fromZodError(kindResult.error, 'INVALID_CONFIG', 'userData.kind');
  const name = options.template ?? defaultTemplateOf[kind];
  if (!name)
    throw new IronflowError('INVALID_CONFIG', `no template ships for kind ${kind}; name one of userData.templates in the profile's userData.template`, {
      path: 'userData.template',
    });
  const vars = variablesOf(input);
  const custom = options.templates && Object.hasOwn(options.templates, name) ? options.templates[name] : undefined;
  if (custom !== undefined) return { kind, template: name, document: renderCustom(custom, vars, name) };
  const shipped = shippedTemplates[name];
  if (!shipped)
    throw new IronflowError('INVALID_CONFIG', `no template ${name}: configure it in userData.templates, or use ${Object.keys(shippedTemplates).join(' or ')}`, {
      path: 'userData.template',
    });
  if (shipped.kind !== kind) throw new IronflowError('INVALID_CONFIG', `template ${name} renders ${shipped.kind}, not ${kind}`, { path: 'userData.template' });
  return { kind, template: name, document: shipped.render(vars) };
}
