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
	err := scanAudit(path, from, to, func(ev *simcluster.AuditEvent) {
		if ev.IsWrite() && strings.HasPrefix(ev.UserAgent, agentPrefix) {
			wc.Total++
			wc.By[ev.Resource()+" "+ev.Verb]++
			if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400 {
				wc.Failed++
			}
		}
	})
	return wc, err
}

// strayPodDeletes counts, in [from, to), the pods kwok removed that no other client had deleted
// since they were created. kwok finishes a graceful delete with a delete by name, without the
// pod's UID as a precondition; when it runs late, that delete can hit the next pod of the same
// name, which a StatefulSet creates at once, and the StatefulSet controller creates it again. On
// a loaded machine this repeats dozens of times per pod and holds a StatefulSet's rollout back for
// minutes: a simulator artefact, which the churn reports next to its time.
func strayPodDeletes(path string, from, to int64) (int, error) {
	deleting := map[string]bool{} // namespace/name -> a client other than kwok deleted it
	stray := 0
	err := scanAudit(path, from, to, func(ev *simcluster.AuditEvent) {
		if !ev.IsWrite() || ev.ObjectRef == nil || ev.ObjectRef.Resource != "pods" || ev.ObjectRef.Subresource != "" ||
			ev.ResponseStatus == nil || ev.ResponseStatus.Code >= 300 {
			return
		}
		key := ev.ObjectRef.Namespace + "/" + ev.ObjectRef.Name
		switch {
		case ev.Verb == "create" && ev.ObjectRef.Name != "": // pods named by generateName never reuse a name
			deleting[key] = false
		case ev.Verb == "delete" && strings.HasPrefix(ev.UserAgent, "kwok"):
			if d, seen := deleting[key]; seen && !d {
				stray++
			}
			delete(deleting, key)
		case ev.Verb == "delete":
			deleting[key] = true
		}
	})
	return stray, err
}

// scanAudit calls fn for each audit event in [from, to) of the log at path.
func scanAudit(path string, from, to int64, fn func(*simcluster.AuditEvent)) error {
	if to < from {
		return fmt.Errorf("audit log %s shrank from %d to %d bytes (rotated?): the window cannot be counted", path, from, to)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.LimitReader(f, to-from), 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var ev simcluster.AuditEvent
			if jerr := json.Unmarshal(line, &ev); jerr != nil {
				if err == nil { // a complete line that is not JSON
					return fmt.Errorf("audit log %s: %w", path, jerr)
				}
			} else {
				fn(&ev)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
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
