// The console's cookies: read from the Cookie header, written HttpOnly, SameSite=Strict and
// scoped to /console (Secure when the page came over https), so no script and no other site
// or path ever sends or reads them.

export const SESSION_COOKIE = 'ironflow_console';
/** The sign-in form's double-submit token (there is no session yet to hold one). */
export const SIGN_IN_COOKIE = 'ironflow_console_sign_in';

const MAX_COOKIE_HEADER = 8192;

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header || header.length > MAX_COOKIE_HEADER) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A Set-Cookie value; maxAgeSeconds 0 deletes the cookie, undefined makes it last until the browser closes. */
export function cookieHeader(name: string, value: string, options: { secure: boolean; maxAgeSeconds?: number }): string {
  return [
    `${name}=${value}`,
    'Path=/console',
    'HttpOnly',
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
    ...(options.maxAgeSeconds !== undefined ? [`Max-Age=${options.maxAgeSeconds}`] : []),
  ].join('; ');
}
