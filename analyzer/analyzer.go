package analyzer

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"golang.org/x/tools/go/analysis"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/keyshape"
	"github.com/keyguard/keyguard/registry"
)

// Name is the analyzer's name: go vet prefixes its flags with it
// (-keylint.registry).
const Name = "keylint"

const doc = `report Redis keys built by hand or matching no registered template

keylint finds the calls into github.com/redis/go-redis/v9, rueidis, redigo
(and keyguard's SDK) whose key argument is not the String() of a key built by the generated
builder (keyguard gen --lang go). It rebuilds the key's shape from literals,
+, fmt.Sprintf, strings.Join, constants and simple local data flow, and
compares it with the registry: raw-key when a registered template holds it
(with the builder to call instead), unregistered-code when none does.`

// New returns the analyzer checking keys against reg.
func New(reg *registry.Registry) *analysis.Analyzer {
	c := keyshape.NewClassifier(reg)
	return newAnalyzer(func() (*keyshape.Classifier, error) { return c, nil })
}

// NewWithFlags returns the analyzer with a -registry flag: the registry
// file, loaded once on first use. Without the flag it is KEYGUARD_REGISTRY,
// else keyguard.yaml in the working directory or the nearest parent that
// has one (go vet runs the tool in each package's directory).
func NewWithFlags() *analysis.Analyzer {
	var path string
	var once sync.Once
	var c *keyshape.Classifier
	var err error
	a := newAnalyzer(func() (*keyshape.Classifier, error) {
		once.Do(func() {
			var reg *registry.Registry
			reg, err = loadRegistry(path)
			if err == nil {
				c = keyshape.NewClassifier(reg)
			}
		})
		return c, err
	})
	a.Flags.StringVar(&path, "registry", os.Getenv("KEYGUARD_REGISTRY"), "registry `file` (default: keyguard.yaml here or in the nearest parent directory)")
	return a
}

func loadRegistry(path string) (*registry.Registry, error) {
	if path == "" {
		dir, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("keylint: %w", err)
		}
		for {
			p := filepath.Join(dir, "keyguard.yaml")
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
			up := filepath.Dir(dir)
			if up == dir {
				return nil, errors.New("keylint: no keyguard.yaml in this directory or its parents\n\tTry: -registry /abs/path/keyguard.yaml (go vet: -keylint.registry=...)")
			}
			dir = up
		}
	}
	reg, err := registry.Load(path)
	if err != nil {
		return nil, fmt.Errorf("keylint: %w", err)
	}
	return reg, nil
}

func newAnalyzer(classifier func() (*keyshape.Classifier, error)) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:      Name,
		Doc:       doc,
		URL:       finding.HelpURI("", finding.RawKey),
		FactTypes: []analysis.Fact{new(KeyParams), new(KeyShape)},
		Flags:     *flag.NewFlagSet(Name, flag.ContinueOnError),
	}
	a.Run = func(pass *analysis.Pass) (any, error) {
		c, err := classifier()
		if err != nil {
			return nil, err
		}
		p := newPkg(pass, c)
		p.emit = p.diagnose
		p.run()
		return nil, nil
	}
	return a
}

// KeyParams is the fact that a function passes some of its string
// parameters whole to Redis as keys: its callers' arguments are checked as
// keys, at the call.
type KeyParams struct {
	Params []int // parameter indexes, ascending
}

// KeyShape is the fact that a function returns a key of one shape (a
// helper such as PendingKey(qname) returning fmt.Sprintf(...)): its
// parameters are marked holes, which a call fills with its arguments.
type KeyShape struct {
	Shape keyshape.Shape
}

// AFact marks KeyShape as an analysis fact.
func (*KeyShape) AFact() {}

func (k *KeyShape) String() string { return "keyShape(" + k.Shape.String() + ")" }

// AFact marks KeyParams as an analysis fact.
func (*KeyParams) AFact() {}

func (k *KeyParams) String() string { return fmt.Sprintf("keyParams%v", k.Params) }

// Check runs keylint on one type-checked package for a driver that is not a
// go/analysis one (keyguard scan-code). The pass needs Fset, Files, Pkg,
// TypesInfo, ImportObjectFact and ExportObjectFact (KeyParams facts of the
// packages it imports, in dependency order); emit gets every finding with
// the position of its key argument and the Redis command the call sends
// (lower case, "" when not known).
func Check(pass *analysis.Pass, c *keyshape.Classifier, emit func(pos token.Pos, f finding.Finding, command string)) {
	p := newPkg(pass, c)
	p.emit = func(arg ast.Expr, s keyshape.Shape, _ *ast.File) {
		emit(arg.Pos(), p.finding(s), p.command)
	}
	p.run()
}

// run checks one package: first which of its functions hand a parameter to
// Redis as a key (exported as facts), then every key argument.
func (p *pkg) run() {
	pass := p.pass
	p.findKeyParams()
	for fn, params := range p.keyParams {
		if len(params) == 0 {
			continue
		}
		idx := make([]int, 0, len(params))
		for i := range params {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		pass.ExportObjectFact(fn, &KeyParams{Params: idx})
	}
	for fn := range p.funcs {
		if s, ok := p.keyShape(fn); ok && fn.Exported() {
			pass.ExportObjectFact(fn, &KeyShape{Shape: s})
		}
	}
	p.check()
}

// finding is the finding of a key's shape, naming the project's function
// the key goes to Redis through.
func (p *pkg) finding(s keyshape.Shape) finding.Finding {
	fd := p.c.Finding(keyshape.Go, s.Unmark())
	if p.via != "" {
		fd.Message += " (via " + p.via + ")"
	}
	return fd
}

// diagnose turns a shape into a diagnostic at the key argument.
func (p *pkg) diagnose(arg ast.Expr, s keyshape.Shape, f *ast.File) {
	fd := p.finding(s)
	d := analysis.Diagnostic{
		Pos:      arg.Pos(),
		End:      arg.End(),
		Category: fd.Rule,
		Message:  fd.Rule + ": " + fd.Message,
		URL:      finding.HelpURI("", fd.Rule),
	}
	if fd.Hint != "" {
		d.Message += "; " + fd.Hint
	}
	if fd.Rule == finding.RawKey {
		if fix, ok := p.fix(arg, s, f); ok {
			d.SuggestedFixes = []analysis.SuggestedFix{fix}
		}
	}
	p.pass.Report(d)
}

// callee is the function a call calls, or nil (a func value, a builtin, a
// conversion).
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = fun
	case *ast.SelectorExpr:
		id = fun.Sel
	case *ast.IndexExpr: // generic instantiation
		return callee(info, &ast.CallExpr{Fun: fun.X})
	default:
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	if fn == nil {
		return nil
	}
	return fn.Origin()
}
