package main

import (
	"fmt"
	"io"
	"strconv"
)

// printTables prints the comparison with upstream and the per-scenario details.
func printTables(w io.Writer, res *results) {
	m := res.Machine
	fmt.Fprintf(w, "Machine: %d CPUs, %s RAM, load average %s at the start and %s at the end; %s; operator %s%s\n\n",
		m.CPUs, m.MemTotal, m.LoadStart, m.LoadEnd, m.GoVersion, m.Commit, map[bool]string{true: " " + m.OperatorArgs, false: ""}[m.OperatorArgs != ""])
	var up, is *scenarioResult
	for _, s := range res.Scenarios {
		switch s.Name {
		case "upstream":
			up = s
		case "issue":
			is = s
		}
	}
	rss := func(st rssStats) string {
		if st.Samples == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f MiB steady, %.0f MiB peak", st.SteadyMB, st.PeakMB)
	}
	secs := func(f float64) string {
		if f == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f s", f)
	}
	if up != nil {
		fmt.Fprintln(w, "| figure | upstream v0.140.0 | this operator |")
		fmt.Fprintln(w, "| --- | --- | --- |")
		fmt.Fprintf(w, "| RSS with %d unrelated objects (%d ConfigMaps, Secrets and Pods each, ~2 KB), no collectors | 110 MB | %s |\n",
			up.Noise, up.Noise/3, rss(up.RSSNoCollectors))
		fmt.Fprintf(w, "| RSS after %d deployment-mode collectors converged | 120–123 MB | %s |\n", up.Collectors, rss(up.RSSConverged))
		if up.ExtraNoise > 0 {
			fmt.Fprintf(w, "| RSS with %d unrelated objects + %d collectors | 135 MB steady, 151 MB peak | %s after a restart (%.0f MiB peak while the objects were added) |\n",
				up.Noise+up.ExtraNoise, up.Collectors, rss(up.RSSAfterRestart), up.RSSWhileAddingPeakMB)
		}
		fmt.Fprintf(w, "| time from creating %d collectors to all their Deployments available | 20 s | %s (all collectors Ready=True: %s) |\n",
			up.Collectors, secs(up.AvailableSeconds), secs(up.ReadySeconds))
		fmt.Fprintf(w, "| the floor: the same %d Deployments created directly by a client | 2.9 s | %s |\n", up.Collectors, secs(up.FloorSeconds))
		fmt.Fprintf(w, "| API writes in %.0f s of idling with %d unchanged collectors | 777 (388 Service updates, 130 status patches, 130 Events, 129 Deployment updates) | %s (%.0f reconciles) |\n",
			up.IdleSeconds, up.Collectors, up.IdleWrites, up.IdleReconciles)
		if up.ResyncWrites != nil {
			fmt.Fprintf(w, "| API writes in %.0f s with --sync-period=%.0fs | n/a | %s (%.0f reconciles, %s per resync) |\n",
				up.IdleSeconds, up.SyncPeriodSeconds, *up.ResyncWrites, up.ResyncReconciles, perResync(up))
		}
		fmt.Fprintln(w)
	}
	if is != nil {
		fmt.Fprintf(w, "Issue 5 figures (%d unrelated objects + %d collectors):\n\n", is.Noise, is.Collectors)
		fmt.Fprintln(w, "| figure | this operator |")
		fmt.Fprintln(w, "| --- | --- |")
		fmt.Fprintf(w, "| RSS with %d unrelated objects, no collectors | %s |\n", is.Noise, rss(is.RSSNoCollectors))
		fmt.Fprintf(w, "| RSS after converging %d collectors | %s |\n", is.Collectors, rss(is.RSSConverged))
		fmt.Fprintf(w, "| time to converge %d collectors (Deployments Available / Ready=True) | %s / %s (floor %s) |\n",
			is.Collectors, secs(is.AvailableSeconds), secs(is.ReadySeconds), secs(is.FloorSeconds))
		fmt.Fprintf(w, "| writes to converge them | %s |\n", is.ConvergeWrites)
		fmt.Fprintf(w, "| writes in %.0f s of idling | %s (%.0f reconciles) |\n", is.IdleSeconds, is.IdleWrites, is.IdleReconciles)
		if is.ResyncWrites != nil {
			fmt.Fprintf(w, "| writes per no-op resync (--sync-period=%.0fs, %.0f s) | %s (%s writes, %.0f reconciles) |\n",
				is.SyncPeriodSeconds, is.IdleSeconds, perResync(is), *is.ResyncWrites, is.ResyncReconciles)
		}
		fmt.Fprintln(w)
	}
	for _, s := range res.Scenarios {
		fmt.Fprintf(w, "Scenario %s: noise %s; load average %s when the collectors were created, %s at the floor; creating the collectors took %.1f s; writes to converge: %s",
			s.Name, s.NoiseSizes, s.LoadAtCollectors, s.LoadAtFloor, s.CreateSeconds, s.ConvergeWrites)
		if s.RestartWrites != nil {
			fmt.Fprintf(w, "; on a restart: start-up reconciles done after %.1f s, writes: %s", s.RestartQuietSeconds, *s.RestartWrites)
		}
		fmt.Fprintln(w)
	}
}

func perResync(s *scenarioResult) string {
	if s.ResyncWrites == nil || s.ResyncReconciles == 0 {
		return "n/a"
	}
	resyncs := s.ResyncReconciles / float64(s.Collectors)
	return strconv.FormatFloat(float64(s.ResyncWrites.Total)/resyncs, 'f', -1, 64)
}
