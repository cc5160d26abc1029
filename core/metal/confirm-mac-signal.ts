// The provision workflow's signal that metal.confirmMac stored a MAC: named once for the API
// (core/metal/confirm-mac.ts) and the workflow (workflows/provision-handles.ts), which may
// import only pure modules.
export const MAC_CONFIRMED_SIGNAL = 'macConfirmed';
