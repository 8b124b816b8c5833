// Package keycheck runs the checks of the registry and of concrete keys
// against it for the command line, and prints them: keyguard lint (text,
// JSON, SARIF) and keyguard check (one line or JSON object per key). The
// checks themselves are the registry's; this package reads the keys and
// writes the results. It must not be imported by the SDK.
package keycheck
