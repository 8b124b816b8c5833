// Package plugin makes keylint a golangci-lint module plugin. Build a
// golangci-lint that includes it (golangci-lint custom, with this module in
// .custom-gcl.yml) and enable it in .golangci.yml:
//
//	linters:
//	  enable: [keylint]
//	  settings:
//	    custom:
//	      keylint:
//	        type: module
//	        settings: {registry: keyguard.yaml}
//
// See docs/scan-code.md for the whole setup.
//
// Of this module it imports only analyzer and registry; nothing in the module
// imports it.
package plugin

import (
	"fmt"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/keyguard/keyguard/analyzer"
	"github.com/keyguard/keyguard/registry"
)

// golangci-lint finds module plugins only through this registration, made
// when the package is linked in: the one init in keyguard, by that contract.
func init() { register.Plugin(analyzer.Name, New) }

// Settings are the plugin's settings in .golangci.yml.
type Settings struct {
	// Registry is the registry file, relative to where golangci-lint runs
	// (default keyguard.yaml).
	Registry string `json:"registry"`
}

// New loads the registry the settings name and returns the plugin.
func New(conf any) (register.LinterPlugin, error) {
	s, err := register.DecodeSettings[Settings](conf)
	if err != nil {
		return nil, fmt.Errorf("keylint settings: %w (the only setting is registry: FILE)", err)
	}
	if s.Registry == "" {
		s.Registry = "keyguard.yaml"
	}
	reg, err := registry.Load(s.Registry)
	if err != nil {
		return nil, fmt.Errorf("keylint: %w", err)
	}
	return &plugin{reg: reg}, nil
}

type plugin struct{ reg *registry.Registry }

// BuildAnalyzers returns keylint for the loaded registry.
func (p *plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{analyzer.New(p.reg)}, nil
}

// GetLoadMode asks for type information: keylint needs types to know a
// go-redis call and a builder's key.
func (p *plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
