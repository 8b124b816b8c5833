package demodata

// The package keys is generated from this registry; gen_test.go fails when
// it is stale.
//
//go:generate go run ../../cmd/keyguard gen --lang go --pkg keys --registry keyguard.yaml --out keys
