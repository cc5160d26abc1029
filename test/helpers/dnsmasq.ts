// Tests' address-only DHCP server: the product's (agent/emulator/address-only-dhcp.ts).
export { requireDnsmasq, startAddressOnlyDhcp, type AddressOnlyDhcp } from '../../agent/emulator/address-only-dhcp';
