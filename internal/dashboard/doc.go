// Package dashboard is keyguard serve: audits on a schedule (never on a
// scrape), a bounded history of their reports, web pages with server-drawn
// SVG charts (no script needed, nothing loaded from the network), the
// report as JSON, and a Prometheus exporter whose labels are templates and
// owners, never keys.
//
//	srv, err := dashboard.New(dashboard.Config{Registry: reg, Auditor: dashboard.NewAuditor(reg, target, opts), Registerer: pr, Gatherer: pr})
//	ln, err := net.Listen("tcp", "127.0.0.1:8080") // dashboard.CheckListen first for other addresses
//	err = srv.Run(ctx, ln)                          // audits every Config.Interval until ctx ends
//
// source.go is the one file that knows the report type and how an audit
// runs; view.go turns a report into the view model every page, the
// exporter and the history work on. Writer records (redishook) and hot
// keys reported by SDKs come in through WriterSource and HotKeySource.
package dashboard
