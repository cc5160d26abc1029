// Join tokens' bearer scheme: `ifjt_<jt_id>.<secret>`.
export const JOIN_TOKEN_SCHEME = 'ifjt';
