// Tests' network namespaces: the product's namespace network (agent/emulator/qemu-network.ts)
// under the names the tests use.
export {
  createNamespaceNetwork as createTestNetwork,
  requireNetworkNamespaces,
  type LoopbackForward,
  type NamespaceNetwork as TestNetwork,
  type NetworkHost,
} from '../../agent/emulator/qemu-network';
