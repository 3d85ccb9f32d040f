package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/otelop/otelop/test/simcluster"
)

// The API server writes one audit event per finished request (stage ResponseComplete, level
// Metadata; simcluster.AuditEvent); the simulated cluster's policy drops get, list and watch. A
// window of requests is the byte range of the log between two offsets.

// writeCount is the operator's write requests in one window.
type writeCount struct {
	Total  int            `json:"total"`
	Failed int            `json:"failed"`
	By     map[string]int `json:"by_resource_verb"`
}

// countWrites counts the write requests whose user agent starts with agentPrefix in [from, to).
func countWrites(path string, from, to int64, agentPrefix string) (writeCount, error) {
	wc := writeCount{By: map[string]int{}}
	if to < from {
		return wc, fmt.Errorf("audit log %s shrank from %d to %d bytes (rotated?): the window cannot be counted", path, from, to)
	}
	f, err := os.Open(path)
	if err != nil {
		return wc, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return wc, err
	}
	r := bufio.NewReaderSize(io.LimitReader(f, to-from), 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var ev simcluster.AuditEvent
			if jerr := json.Unmarshal(line, &ev); jerr != nil {
				if err == nil { // a complete line that is not JSON
					return wc, fmt.Errorf("audit log %s: %w", path, jerr)
				}
			} else if ev.IsWrite() && strings.HasPrefix(ev.UserAgent, agentPrefix) {
				wc.Total++
				wc.By[ev.Resource()+" "+ev.Verb]++
				if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400 {
					wc.Failed++
				}
			}
		}
		if err == io.EOF {
			return wc, nil
		}
		if err != nil {
			return wc, err
		}
	}
}

// String gives "777 (388 services update, 130 ...)".
func (w writeCount) String() string {
	if w.Total == 0 {
		return "0"
	}
	keys := make([]string, 0, len(w.By))
	for k := range w.By {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if w.By[keys[i]] != w.By[keys[j]] {
			return w.By[keys[i]] > w.By[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", w.By[k], k)
	}
	s := fmt.Sprintf("%d (%s)", w.Total, strings.Join(parts, ", "))
	if w.Failed > 0 {
		s += fmt.Sprintf(", %d of them failed", w.Failed)
	}
	return s
}
