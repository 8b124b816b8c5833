// Package demodata holds the registry that keyguard-demo runs on, so the
// demo, the generated example package and the tests share one file.
//
// It imports no package of this module; only the demo and tests import it.
package demodata

import _ "embed"

// Registry is the demo keyguard.yaml.
//
//go:embed keyguard.yaml
var Registry []byte

// File is the name the demo gives the registry in messages.
const File = "keyguard.yaml"

// Path is where the registry is in keyguard's source tree: the demo names
// it so, as its findings cite lines of it and the user has no file of that
// name at hand.
const Path = "internal/demodata/keyguard.yaml"
