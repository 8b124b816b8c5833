// Package hotkeys is the hot-key analysis of `keyguard hotkeys`: it merges
// the reports the SDK's detectors write to Redis (package hotkey) with the
// servers' LFU counters and a bounded MONITOR sample into one report per
// key, template and region.
//
//	lfu, err := hotkeys.WalkLFU(ctx, rdb, hotkeys.LFUOptions{})
//	rep := hotkeys.BuildReport(reg, sdkReports, lfu, nil, hotkeys.ReportOptions{})
//	err = rep.WriteText(os.Stdout)
//
// It is a tool: the SDK (package hotkey) never imports it, so a service
// that uses the local tier does not link MONITOR parsing.
package hotkeys
