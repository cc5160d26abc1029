// The provision workflow's signal that metal.confirmMac stored a MAC: its name, for its
// definition (workflows/provision-handles.ts, which the API sends through services/temporal)
// and for the test that forges it. A wake-up only: the workflow reads the MAC back from the control
// plane (workflows/confirm-mac-handlers.ts), never from the signal anyone may send.
export const MAC_CONFIRMED_SIGNAL = 'macConfirmed';
