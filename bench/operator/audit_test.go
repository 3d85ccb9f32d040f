package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditLine is one finished request as the simulated cluster's audit log records it.
func auditLine(agent, verb, ns, name string, code int) string {
	return fmt.Sprintf(`{"stage":"ResponseComplete","verb":%q,"userAgent":%q,"objectRef":{"resource":"pods","namespace":%q,"name":%q},"responseStatus":{"code":%d}}`,
		verb, agent, ns, name, code)
}

func TestStrayPodDeletes(t *testing.T) {
	lines := []string{
		// a rollout as it should be: the controller deletes, kwok finishes the delete, a new pod
		auditLine("kube-controller-manager/v1", "delete", "a", "c-0", 200),
		auditLine("kwok/v0.8.0", "delete", "a", "c-0", 200),
		auditLine("kube-controller-manager/v1", "create", "a", "c-0", 201),
		// kwok's late second delete of the old pod hits the new one: stray, twice
		auditLine("kwok/v0.8.0", "delete", "a", "c-0", 200),
		auditLine("kube-controller-manager/v1", "create", "a", "c-0", 201),
		auditLine("kwok/v0.8.0", "delete", "a", "c-0", 200),
		auditLine("kwok/v0.8.0", "delete", "a", "c-0", 404), // refused: nothing removed
		// a pod made before the window, and a generateName pod: unknown, not counted
		auditLine("kwok/v0.8.0", "delete", "b", "old", 200),
		auditLine("kube-controller-manager/v1", "create", "b", "", 201),
		auditLine("kwok/v0.8.0", "delete", "b", "d-x7k2q", 200),
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	data := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := strayPodDeletes(path, 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got != 2 {
		t.Errorf("strayPodDeletes = %d, want 2", got)
	}
}
