package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// quantileOf is the nearest-rank q-quantile of ds (which it sorts).
func quantileOf(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[max(i, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func ratio(ours, floor time.Duration) string {
	if floor <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(ours)/float64(floor))
}

// printReport prints, per case, the webhook call's p50/p99 for ours and the floor and their ratio
// (the goal: ours' p99 within 1.2x the floor's), the pod create as the client saw it, and the API
// server's coarse histogram of each webhook over the whole run as a cross-check.
func printReport(out map[arm]map[string]*sample, hist map[arm]histogram, cfg config) {
	fmt.Printf("\nPod admission: %s (ours) against %s (allowed, no patch), %d pods per case and webhook, interleaved, %d concurrent creations\n\n",
		webhookName, floorWebhookName, cfg.pods, cfg.concurrency)
	fmt.Println("Webhook call (the API server's \"Call mutating webhook\" span: request built, sent, answered, patch applied):")
	fmt.Println()
	fmt.Println("| case | floor p50 | floor p99 | ours p50 | ours p99 | p50 ours/floor | p99 ours/floor | ours mutated |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, cs := range cases {
		f, o := out[armFloor][cs.short], out[armOurs][cs.short]
		ft, ot := totals(f.admissions, false), totals(o.admissions, false)
		f50, f99 := quantileOf(ft, 0.5), quantileOf(ft, 0.99)
		o50, o99 := quantileOf(ot, 0.5), quantileOf(ot, 0.99)
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %d/%d |\n", cs.name, ms(f50), ms(f99), ms(o50), ms(o99),
			ratio(o50, f50), ratio(o99, f99), o.mutated, len(o.creates))
	}
	fmt.Println()
	fmt.Println("The same calls up to the span's \"Request completed\" event (request encoded, sent over HTTPS, answered, answer decoded), without checking the answer and applying the patch:")
	fmt.Println()
	fmt.Println("| case | floor p50 | floor p99 | ours p50 | ours p99 | p50 ours/floor | p99 ours/floor |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, cs := range cases {
		f, o := totals(out[armFloor][cs.short].admissions, true), totals(out[armOurs][cs.short].admissions, true)
		f50, f99 := quantileOf(f, 0.5), quantileOf(f, 0.99)
		o50, o99 := quantileOf(o, 0.5), quantileOf(o, 0.99)
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", cs.name, ms(f50), ms(f99), ms(o50), ms(o99), ratio(o50, f50), ratio(o99, f99))
	}
	fmt.Println()
	fmt.Println("Pod create as the client saw it (API server, etcd and the webhook):")
	fmt.Println()
	fmt.Println("| case | floor p50 | floor p99 | ours p50 | ours p99 | p50 ours/floor | p99 ours/floor |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, cs := range cases {
		f, o := out[armFloor][cs.short], out[armOurs][cs.short]
		f50, f99 := quantileOf(f.creates, 0.5), quantileOf(f.creates, 0.99)
		o50, o99 := quantileOf(o.creates, 0.5), quantileOf(o.creates, 0.99)
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", cs.name, ms(f50), ms(f99), ms(o50), ms(o99), ratio(o50, f50), ratio(o99, f99))
	}
	fmt.Println()
	fmt.Println("The API server's apiserver_admission_webhook_admission_duration_seconds over the run (all cases; buckets 5, 25, 100 ms):")
	fmt.Println()
	for _, a := range []arm{armFloor, armOurs} {
		h := hist[a]
		fmt.Printf("  %-22s %5.0f admissions, %5.0f under 5 ms (%.1f%%), %5.0f under 25 ms\n", a.webhook(), h.count,
			h.cumulative(0.005), 100*h.cumulative(0.005)/math.Max(h.count, 1), h.cumulative(0.025))
	}
}

// totals lists the calls' whole durations, or their round trips.
func totals(calls []call, roundTrip bool) []time.Duration {
	out := make([]time.Duration, 0, len(calls))
	for _, c := range calls {
		if roundTrip {
			out = append(out, c.roundTrip)
		} else {
			out = append(out, c.total)
		}
	}
	return out
}
