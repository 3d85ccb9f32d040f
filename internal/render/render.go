// Package render implements `opentelemetry-operator render`: it prints every object the operator
// would create for the custom resources in a file, with no cluster.
package render

import (
	"fmt"
	"io"
)

// Main runs the render command with args (after "render") and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "render: not implemented yet")
	return 1
}
