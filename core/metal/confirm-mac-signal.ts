// The provision workflow's signal that metal.confirmMac stored a MAC: named once for the API
// (services/metal/confirm-mac.ts) and the workflow (workflows/provision-handles.ts), which may
// import only pure modules. A wake-up only: the workflow reads the MAC back from the control
// plane (workflows/confirm-mac-handlers.ts), never from the signal anyone may send.
export const MAC_CONFIRMED_SIGNAL = 'macConfirmed';
