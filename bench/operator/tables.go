package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
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
	printBigNoise(w, res.Scenarios, rss, secs)
	for _, s := range res.Scenarios {
		floorLoad := ""
		if s.LoadAtFloor != "" {
			floorLoad = ", " + s.LoadAtFloor + " at the floor"
		}
		fmt.Fprintf(w, "Scenario %s: noise %s; load average %s when the collectors were created%s; creating the collectors took %.1f s; writes to converge: %s",
			s.Name, s.NoiseSizes, s.LoadAtCollectors, floorLoad, s.CreateSeconds, s.ConvergeWrites)
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

// printScale prints the scale, churn and mcr scenarios' tables.
func printScale(w io.Writer, runs []*scaleResult) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintln(w)
	var floor *scaleResult
	for _, r := range runs {
		if r.FloorSeconds > 0 {
			floor = r
		}
	}
	for _, r := range runs {
		if r.Name != "scale" && r.Name != "churn" {
			continue
		}
		fmt.Fprintf(w, "Scenario %s: %d collectors, a quarter each of %s, %d fake nodes, %d workloads with %d pods; load average %s at the creates, %s after convergence%s\n\n",
			r.Name, r.Collectors, strings.Join(r.Modes, ", "), r.Nodes, r.Workloads, r.WorkloadPods, r.LoadAtCreate, r.LoadAfter, argsNote(r))
		fmt.Fprintln(w, "| figure | this operator |")
		fmt.Fprintln(w, "| --- | --- |")
		fmt.Fprintf(w, "| time from the first create to every workload Available / every collector Ready=True | %.1f s / %.1f s (creates took %.1f s) |\n",
			r.AvailableSeconds, r.ReadySeconds, r.CreateSeconds)
		if r.FloorSeconds > 0 {
			fmt.Fprintf(w, "| the floor: the same %d workloads with their ServiceAccounts and ConfigMaps (%d objects) created directly on a fresh cluster | %.1f s (**%.2fx**; load average %s) |\n",
				r.Workloads, r.FloorObjects, r.FloorSeconds, r.AvailableSeconds/r.FloorSeconds, r.LoadAtFloor)
		}
		if f := r.FloorAll; f != nil && f.Seconds > 0 {
			fmt.Fprintf(w, "| the floor with every object the operator made for those workloads (also Services, PDBs, NetworkPolicies: %d objects), another fresh cluster | %.1f s (**%.2fx**; load average %s) |\n",
				f.Objects, f.Seconds, r.AvailableSeconds/f.Seconds, f.Load)
		}
		fmt.Fprintf(w, "| writes to converge | %s |\n", perCollector(r.ConvergeWrites, r.Collectors))
		fmt.Fprintf(w, "| RSS while converging (median / peak) | %.0f MiB / %.0f MiB |\n", r.RSSConverging.SteadyMB, r.RSSConverged.PeakMB)
		fmt.Fprintf(w, "| RSS after convergence | %.0f MiB steady |\n", r.RSSConverged.SteadyMB)
		if r.SidecarApps > 0 {
			fmt.Fprintf(w, "| Deployments asking for a sidecar collector: Available, pods injected | %.1f s, %d/%d |\n", r.SidecarAppsSeconds, r.SidecarInjected, r.SidecarApps)
		}
		if c := r.Churn; c != nil {
			fmt.Fprintf(w, "| churn: config of %d collectors (%s) changed at once -> every pod template on its new ConfigMap / every rollout complete | %.1f s / **%.1f s** (%s; load average %s) |\n",
				c.Collectors, c.kinds(), c.TemplatesSeconds, c.Seconds, c.kindTimes(), c.LoadAt)
			floorStray := "-" // no churn floor ran
			if c.FloorSeconds > 0 {
				floorStray = fmt.Sprint(c.FloorStrayPodDeletes)
			}
			fmt.Fprintf(w, "| churn: pods kwok removed that no controller deleted (a simulator artefact that holds StatefulSet rollouts back; operator's run / floor) | %d / %s |\n",
				c.StrayPodDeletes, floorStray)
			if c.FloorSeconds > 0 {
				fmt.Fprintf(w, "| churn floor: the same workloads switched directly to a new ConfigMap (fresh cluster, after the floor) | %.1f s (**%.2fx**; load average %s) |\n",
					c.FloorSeconds, c.Seconds/c.FloorSeconds, c.LoadAtFloor)
			}
			fmt.Fprintf(w, "| churn: writes | %s |\n", perCollector(c.Writes, c.Collectors))
		}
		fmt.Fprintln(w)
	}
	var mcr []*scaleResult
	for _, r := range runs {
		if len(r.Name) > 4 && r.Name[:4] == "mcr-" {
			mcr = append(mcr, r)
		}
	}
	if len(mcr) == 0 {
		return
	}
	fmt.Fprintf(w, "--max-concurrent-reconciles study (%d mixed-mode collectors, a fresh cluster each):\n\n", mcr[0].Collectors)
	fmt.Fprintln(w, "| --max-concurrent-reconciles | workloads Available | all Ready=True | vs floor | writes per collector | RSS peak | load average at the creates |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, r := range mcr {
		ratio := "n/a"
		if floor != nil && floor.FloorSeconds > 0 {
			ratio = fmt.Sprintf("%.2fx", r.AvailableSeconds/floor.FloorSeconds)
		}
		fmt.Fprintf(w, "| %s | %.1f s | %.1f s | %s | %.2f | %.0f MiB | %s |\n", r.Name[4:], r.AvailableSeconds, r.ReadySeconds, ratio,
			float64(r.ConvergeWrites.Total)/float64(r.Collectors), r.RSSConverged.PeakMB, r.LoadAtCreate)
	}
	if floor != nil {
		fmt.Fprintf(w, "\nFloor (%d workloads, %d objects, fresh cluster): %.1f s (load average %s)\n", floor.Workloads, floor.FloorObjects, floor.FloorSeconds, floor.LoadAtFloor)
	}
	fmt.Fprintln(w)
}

func argsNote(r *scaleResult) string {
	if r.OperatorArgs == "" {
		return ""
	}
	return "; operator flags " + r.OperatorArgs
}

// printBigNoise prints the bignoise scenario's table.
func printBigNoise(w io.Writer, runs []*scenarioResult, rss func(rssStats) string, secs func(float64) string) {
	for _, s := range runs {
		if s.Name != "bignoise" {
			continue
		}
		fmt.Fprintf(w, "RSS with many unrelated objects (%d: %d ConfigMaps, Secrets and Pods each, ~2 KB):\n\n", s.Noise, s.Noise/3)
		fmt.Fprintln(w, "| figure | this operator |")
		fmt.Fprintln(w, "| --- | --- |")
		fmt.Fprintf(w, "| RSS with %d unrelated objects, no collectors | %s |\n", s.Noise, rss(s.RSSNoCollectors))
		fmt.Fprintf(w, "| RSS after converging %d collectors | %s |\n", s.Collectors, rss(s.RSSConverged))
		fmt.Fprintf(w, "| time to converge them (Deployments Available / Ready=True) | %s / %s |\n", secs(s.AvailableSeconds), secs(s.ReadySeconds))
		fmt.Fprintf(w, "| writes in %.0f s of idling | %s (%.0f reconciles) |\n\n", s.IdleSeconds, s.IdleWrites, s.IdleReconciles)
	}
}
