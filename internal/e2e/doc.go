// Package e2e holds end-to-end tests that build the msgsvc binary and drive
// it as an operator and an integrator would: through its command line, its
// HTTP API and the webhooks it posts. The package has no non-test code
// beyond this comment; the helpers live in its _test files.
package e2e
