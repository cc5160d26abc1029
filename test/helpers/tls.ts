// A throwaway CA and a server certificate for 127.0.0.1 (TLS tests of BMC drivers, the e2e
// image server): the stack's helper, shared with `npm run demo`.
export { makeServerCertificate, type TestCertificates } from '../../stack/throwaway-tls';
