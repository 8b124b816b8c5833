// Command keylint reports Redis keys built by hand, or matching no template
// of the registry, in Go code that uses go-redis.
//
//	keylint -registry keyguard.yaml ./...
//	go vet -vettool=$(which keylint) -registry=$PWD/keyguard.yaml ./...
//	keylint -registry keyguard.yaml -fix ./...   # apply the builder calls it suggests
//
// See docs/scan-code.md.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/keyguard/keyguard/analyzer"
)

func main() { singlechecker.Main(analyzer.NewWithFlags()) }
