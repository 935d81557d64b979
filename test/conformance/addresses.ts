// Where the parties of the conformance suite are: the issuer Gatehouse is configured with, and the
// relying party's site (https://rp.test, which Chromium resolves to the stub site of browser-agent.ts).

export const ISSUER = 'https://gatehouse.test';
export const RP_ORIGIN = 'https://rp.test';
export const REDIRECT_URI = `${RP_ORIGIN}/cb`;
/** A second registered redirect URI, so that one is never implied (RFC 6749 §3.1.2.3). */
export const OTHER_REDIRECT_URI = `${RP_ORIGIN}/other-cb`;
export const POST_LOGOUT_REDIRECT_URI = `${RP_ORIGIN}/post_logout_redirect`;
