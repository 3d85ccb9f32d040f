package simcluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// AuditEvent is what the simulated cluster's audit log (Options.Audit: level Metadata, reads
// dropped) records of one finished request.
type AuditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// IsWrite reports whether the event is a finished write request (create, update, patch, delete).
func (e AuditEvent) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return e.Stage == "ResponseComplete" || e.Stage == "Panic"
	}
	return false
}

// Resource is "resource" or "resource/subresource" ("?" without an object).
func (e AuditEvent) Resource() string {
	if e.ObjectRef == nil {
		return "?"
	}
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

// AuditOffset is the audit log's current size: the byte offset where a window of requests starts
// (see ReadAudit).
func AuditOffset(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// ReadAudit calls fn for every event of the audit log at path from byte offset from to the end
// (a window of requests is the byte range between two offsets, see os.Stat's size).
func ReadAudit(path string, from int64, fn func(AuditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var ev AuditEvent
			if jerr := json.Unmarshal(line, &ev); jerr != nil {
				return fmt.Errorf("audit log %s: %w", path, jerr)
			}
			fn(ev)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
